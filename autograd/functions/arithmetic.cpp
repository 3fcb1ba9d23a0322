// add, sub, mul, div (tensor and scalar forms, out of place and in place) with backward.
// Broadcast inputs get their gradient summed back to their own shape.
#include "autograd/function.h"
#include "autograd/ops.h"
#include "core/native/copy/copy.h"
#include "core/native/elementwise/elementwise.h"
#include "core/native/reduce/reduce.h"

namespace gr {

using autograd::record;
using autograd::SavedTensor;
using autograd::sum_to;
namespace native = gr::native;

namespace {

// a + alpha * b, or a - alpha * b when `negate`.
Tensor add_sub(const Tensor& a, const Tensor& b, const Scalar& alpha, bool negate) {
  Tensor out = negate ? native::sub(a, b, alpha) : native::add(a, b, alpha);
  if (autograd::needs_grad(a, b)) {
    double factor = negate ? -alpha.to_double() : alpha.to_double();
    record(negate ? "SubBackward0" : "AddBackward0", {a, b}, {out},
           [sa = a.sizes().vec(), sb = b.sizes().vec(), factor](const TensorList& g, const std::vector<bool>& needs) {
             return TensorList{needs[0] ? sum_to(g[0], sa) : Tensor(),
                               needs[1] ? sum_to(factor == 1.0 ? g[0] : g[0] * factor, sb) : Tensor()};
           });
  }
  return out;
}

Tensor add_sub_scalar(const Tensor& a, const Scalar& b, bool negate) {
  Tensor s = native::wrapped_scalar(a, b);
  Tensor out = negate ? native::sub(a, s) : native::add(a, s);
  if (autograd::needs_grad(a))
    record(negate ? "SubBackward1" : "AddBackward1", {a}, {out},
           [](const TensorList& g, const std::vector<bool>&) { return TensorList{g[0]}; });
  return out;
}

}  // namespace

Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha) { return add_sub(a, b, alpha, false); }
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha) { return add_sub(a, b, alpha, true); }
Tensor add(const Tensor& a, const Scalar& b) { return add_sub_scalar(a, b, false); }
Tensor sub(const Tensor& a, const Scalar& b) { return add_sub_scalar(a, b, true); }

Tensor mul(const Tensor& a, const Tensor& b) {
  Tensor out = native::mul(a, b);
  if (autograd::needs_grad(a, b)) {
    SavedTensor sa(b.requires_grad() ? a : Tensor()), sb(a.requires_grad() ? b : Tensor());
    record("MulBackward0", {a, b}, {out},
           [sa, sb, shape_a = a.sizes().vec(), shape_b = b.sizes().vec()](const TensorList& g,
                                                                          const std::vector<bool>& needs) {
             return TensorList{needs[0] ? sum_to(g[0] * sb.unpack(), shape_a) : Tensor(),
                               needs[1] ? sum_to(g[0] * sa.unpack(), shape_b) : Tensor()};
           });
  }
  return out;
}

Tensor mul(const Tensor& a, const Scalar& b) {
  Tensor s = native::wrapped_scalar(a, b);
  Tensor out = native::mul(a, s);
  if (autograd::needs_grad(a))
    record("MulBackward1", {a}, {out}, [s](const TensorList& g, const std::vector<bool>&) {
      return TensorList{g[0] * s};
    });
  return out;
}

Tensor div(const Tensor& a, const Tensor& b) {
  Tensor out = native::div(a, b);
  if (autograd::needs_grad(a, b)) {
    SavedTensor sb(b), so(b.requires_grad() ? out : Tensor(), /*is_output=*/true);
    record("DivBackward0", {a, b}, {out},
           [sb, so, shape_a = a.sizes().vec(), shape_b = b.sizes().vec()](const TensorList& g,
                                                                          const std::vector<bool>& needs) {
             Tensor bv = sb.unpack();
             Tensor ga = needs[0] ? sum_to(g[0] / bv, shape_a) : Tensor();
             // d(a/b)/db = -(a/b)/b
             Tensor gb = needs[1] ? sum_to(-(g[0] * so.unpack()) / bv, shape_b) : Tensor();
             return TensorList{ga, gb};
           });
  }
  return out;
}

Tensor div(const Tensor& a, const Scalar& b) {
  Tensor s = native::wrapped_scalar(a, b);
  Tensor out = native::div(a, s);
  if (autograd::needs_grad(a))
    record("DivBackward1", {a}, {out}, [s](const TensorList& g, const std::vector<bool>&) {
      return TensorList{g[0] / s};
    });
  return out;
}

// ---- in place: self = f(self, other); self's old history becomes the first input ----

namespace {

Tensor& add_sub_(const Tensor& self, const Tensor& other, const Scalar& alpha, bool negate, const char* op,
                 const char* name) {
  autograd::check_inplace(self, op);
  bool grad = autograd::needs_grad(self, other);
  TensorList inputs = grad ? TensorList{self, other} : TensorList{};
  std::vector<int64_t> shape_o = other.sizes().vec();
  if (negate) native::sub_(self, other, alpha);
  else native::add_(self, other, alpha);
  if (grad) {
    double factor = negate ? -alpha.to_double() : alpha.to_double();
    record(name, inputs, {self},
           [shape_o, factor](const TensorList& g, const std::vector<bool>& needs) {
             return TensorList{needs[0] ? g[0] : Tensor(),
                               needs[1] ? sum_to(factor == 1.0 ? g[0] : g[0] * factor, shape_o) : Tensor()};
           });
  }
  return const_cast<Tensor&>(self);
}

// self *= other (or /=). The gradient for `other` needs self's value from before the op.
Tensor& mul_div_(const Tensor& self, const Tensor& other, bool divide, const char* op, const char* name) {
  autograd::check_inplace(self, op);
  bool grad = autograd::needs_grad(self, other);
  TensorList inputs = grad ? TensorList{self, other} : TensorList{};
  // Clones (differentiable: a double backward reaches self's old history through them).
  Tensor self_before = grad && other.requires_grad() ? self.clone() : Tensor();
  Tensor factor = grad && other.is_same(self) ? other.clone() : other;
  if (divide) native::div_(self, other);
  else native::mul_(self, other);
  if (grad) {
    SavedTensor so(factor);
    record(name, inputs, {self},
           [so, self_before, divide, shape_o = other.sizes().vec()](const TensorList& g, const std::vector<bool>& needs) {
             Tensor o = so.unpack();
             Tensor ga = needs[0] ? (divide ? g[0] / o : g[0] * o) : Tensor();
             Tensor gb;
             if (needs[1]) {
               Tensor prod = g[0] * self_before;
               gb = sum_to(divide ? -prod / (o * o) : prod, shape_o);
             }
             return TensorList{ga, gb};
           });
  }
  return const_cast<Tensor&>(self);
}

}  // namespace

// The Scalar overloads record their own nodes, as ATen's add_.Scalar (AddBackward1) does.
Tensor& Tensor::add_(const Tensor& o, const Scalar& alpha) const {
  return add_sub_(*this, o, alpha, false, "add_", "AddBackward0");
}
Tensor& Tensor::sub_(const Tensor& o, const Scalar& alpha) const {
  return add_sub_(*this, o, alpha, true, "sub_", "SubBackward0");
}
Tensor& Tensor::add_(const Scalar& o) const {
  return add_sub_(*this, native::wrapped_scalar(*this, o), 1, false, "add_", "AddBackward1");
}
Tensor& Tensor::sub_(const Scalar& o) const {
  return add_sub_(*this, native::wrapped_scalar(*this, o), 1, true, "sub_", "SubBackward1");
}
Tensor& Tensor::mul_(const Tensor& o) const { return mul_div_(*this, o, false, "mul_", "MulBackward0"); }
Tensor& Tensor::mul_(const Scalar& o) const {
  return mul_div_(*this, native::wrapped_scalar(*this, o), false, "mul_", "MulBackward1");
}
Tensor& Tensor::div_(const Tensor& o) const { return mul_div_(*this, o, true, "div_", "DivBackward0"); }
Tensor& Tensor::div_(const Scalar& o) const {
  return mul_div_(*this, native::wrapped_scalar(*this, o), true, "div_", "DivBackward1");
}

}  // namespace gr
