// neg, exp, log, sqrt, abs and pow with backward.
#include "autograd/function.h"
#include "autograd/ops.h"
#include "core/native/elementwise.h"
#include "core/native/reduce.h"

namespace gr {

using autograd::record;
using autograd::SavedTensor;

namespace {
// Records a one-input op whose gradient is grad_fn(g, saved).
template <class GradFn>
Tensor unary(const char* name, const Tensor& a, const Tensor& out, const Tensor& to_save, GradFn grad_fn) {
  if (autograd::needs_grad(a)) {
    SavedTensor saved(to_save);
    record(name, {a}, {out}, [saved, grad_fn](const TensorList& g, const std::vector<bool>&) {
      return TensorList{grad_fn(g[0], saved.unpack())};
    });
  }
  return out;
}
}  // namespace

Tensor neg(const Tensor& a) {
  return unary("NegBackward", a, native::neg(a), Tensor(), [](const Tensor& g, const Tensor&) { return native::neg(g); });
}

Tensor exp(const Tensor& a) {
  Tensor out = native::exp(a);
  return unary("ExpBackward", a, out, out, [](const Tensor& g, const Tensor& y) { return native::mul(g, y); });
}

Tensor log(const Tensor& a) {
  return unary("LogBackward", a, native::log(a), a, [](const Tensor& g, const Tensor& x) { return native::div(g, x); });
}

Tensor sqrt(const Tensor& a) {
  Tensor out = native::sqrt(a);
  return unary("SqrtBackward", a, out, out, [](const Tensor& g, const Tensor& y) {
    return native::div(g, native::mul(y, native::wrapped_scalar(y, 2.0)));
  });
}

Tensor abs(const Tensor& a) {
  return unary("AbsBackward", a, native::abs(a), a, [](const Tensor& g, const Tensor& x) { return native::abs_backward(g, x); });
}

Tensor pow(const Tensor& a, const Scalar& exponent) {
  return unary("PowBackward", a, native::pow(a, exponent), a,
               [exponent](const Tensor& g, const Tensor& x) { return native::pow_scalar_backward(g, x, exponent); });
}

Tensor pow(const Tensor& a, const Tensor& exponent) {
  Tensor out = native::pow(a, exponent);
  if (autograd::needs_grad(a, exponent)) {
    SavedTensor sa(a), se(exponent), so(exponent.requires_grad() ? out : Tensor());
    record("PowBackward", {a, exponent}, {out},
           [sa, se, so, shape_a = a.sizes().vec(), shape_e = exponent.sizes().vec()](const TensorList& g,
                                                                                     const std::vector<bool>& needs) {
             const Tensor &x = sa.unpack(), &e = se.unpack();
             Tensor ga, ge;
             if (needs[0]) {  // e * x^(e-1), 0 where e == 0
               Tensor d = native::mul(e, native::pow(x, native::sub(e, native::wrapped_scalar(e, 1))));
               d = native::where(native::eq(e, native::wrapped_scalar(e, 0)), native::wrapped_scalar(d, 0), d);
               ga = native::sum_to(native::mul(g[0], d), shape_a);
             }
             if (needs[1]) {  // x^e * log(x), 0 where x == 0 and e >= 0
               Tensor d = native::mul(so.unpack(), native::log(x));
               Tensor zero = native::wrapped_scalar(d, 0);
               d = native::where(native::eq(x, native::wrapped_scalar(x, 0)),
                                 native::where(native::ge(e, native::wrapped_scalar(e, 0)), zero, d), d);
               ge = native::sum_to(native::mul(g[0], d), shape_e);
             }
             return TensorList{ga, ge};
           });
  }
  return out;
}

}  // namespace gr
