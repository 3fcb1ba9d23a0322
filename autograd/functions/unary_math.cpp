// neg, exp, log, sqrt, abs and pow with backward.
#include "autograd/function.h"
#include "autograd/ops.h"
#include "core/native/copy/copy.h"
#include "core/native/elementwise/elementwise.h"
#include "core/native/reduce/reduce.h"

namespace gr {

using autograd::record;
using autograd::SavedTensor;

namespace {
// Records a one-input op whose gradient is grad_fn(g, saved); `saved_is_output` marks a
// saved result of the op itself (Note [Saved outputs]).
template <class GradFn>
Tensor unary(const char* name, const Tensor& a, const Tensor& out, const Tensor& to_save, bool saved_is_output,
             GradFn grad_fn) {
  if (autograd::needs_grad(a)) {
    SavedTensor saved(to_save, saved_is_output);
    record(name, {a}, {out}, [saved, grad_fn](const TensorList& g, const std::vector<bool>&) {
      return TensorList{grad_fn(g[0], saved.unpack())};
    });
  }
  return out;
}

// Zero where `mask`, else t (0 * inf would give NaN where the derivative is 0 by definition).
Tensor zero_where(const Tensor& mask, const Tensor& t) { return gr::where(mask, native::wrapped_scalar(t, 0), t); }
}  // namespace

Tensor neg(const Tensor& a) {
  return unary("NegBackward0", a, native::neg(a), Tensor(), false, [](const Tensor& g, const Tensor&) { return -g; });
}

Tensor exp(const Tensor& a) {
  Tensor out = native::exp(a);
  return unary("ExpBackward0", a, out, out, true, [](const Tensor& g, const Tensor& y) { return g * y; });
}

Tensor log(const Tensor& a) {
  return unary("LogBackward0", a, native::log(a), a, false, [](const Tensor& g, const Tensor& x) { return g / x; });
}

Tensor sqrt(const Tensor& a) {
  Tensor out = native::sqrt(a);
  return unary("SqrtBackward0", a, out, out, true, [](const Tensor& g, const Tensor& y) { return g / (y * 2.0); });
}

Tensor abs(const Tensor& a) {
  return unary("AbsBackward0", a, native::abs(a), a, false, [](const Tensor& g, const Tensor& x) {
    if (!autograd::needs_grad(g)) return native::abs_backward(g, x);
    return g * gr::sign(x);  // sign's own gradient is zero: only g carries history
  });
}

Tensor pow(const Tensor& a, const Scalar& exponent) {
  return unary("PowBackward0", a, native::pow(a, exponent), a, false, [exponent](const Tensor& g, const Tensor& x) {
    if (!autograd::needs_grad(g, x)) return native::pow_scalar_backward(g, x, exponent);
    const double e = exponent.to_double();
    if (e == 0.0) return g * 0.0;  // a zero that still depends on g, as its derivative is 0 too
    return g * (gr::pow(x, e - 1.0) * e);
  });
}

Tensor pow(const Tensor& a, const Tensor& exponent) {
  Tensor out = native::pow(a, exponent);
  if (autograd::needs_grad(a, exponent)) {
    SavedTensor sa(a), se(exponent), so(exponent.requires_grad() ? out : Tensor(), /*is_output=*/true);
    record("PowBackward1", {a, exponent}, {out},
           [sa, se, so, shape_a = a.sizes().vec(), shape_e = exponent.sizes().vec()](const TensorList& g,
                                                                                     const std::vector<bool>& needs) {
             Tensor x = sa.unpack(), e = se.unpack();
             Tensor ga, ge;
             if (needs[0]) {  // e * x^(e-1), 0 where e == 0
               Tensor d = e * gr::pow(x, e - 1);
               ga = autograd::sum_to(g[0] * zero_where(native::eq(e, native::wrapped_scalar(e, 0)), d), shape_a);
             }
             if (needs[1]) {  // x^e * log(x), 0 where x == 0 and e >= 0
               Tensor d = so.unpack() * gr::log(x);
               Tensor zero_x = native::eq(x, native::wrapped_scalar(x, 0));
               Tensor e_nonneg = native::ge(e, native::wrapped_scalar(e, 0));
               ge = autograd::sum_to(g[0] * gr::where(zero_x, zero_where(e_nonneg, d), d), shape_e);
             }
             return TensorList{ga, ge};
           });
  }
  return out;
}

}  // namespace gr
