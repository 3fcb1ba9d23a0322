// The math family's two-input ops (the GR_BINARY_* lines of core/native/elementwise/math_ops.def): each
// backward formula here, then the ops, read from the list (Note [Element-wise formulas]); and
// lerp (out of place and in place) written out.
#include "autograd/functions/elementwise_grad.h"
#include "core/native/elementwise/elementwise_math.h"

namespace gr {

using autograd::Saves;

// d atan2(a, b) = (b da - a db) / (a^2 + b^2).
GR_BINARY_GRAD(atan2, (true, true), false) {
  Tensor scale = g / (square(self) + square(other));
  return TensorList{needs[0] ? scale * other : Tensor(), needs[1] ? scale * -self : Tensor()};
}

// d hypot(a, b) = (a da + b db) / hypot(a, b).
GR_BINARY_GRAD(hypot, (true, true), true) {
  Tensor scale = g / result;
  return TensorList{needs[0] ? scale * self : Tensor(), needs[1] ? scale * other : Tensor()};
}

// d logaddexp(a, b) = (e^a da + e^b db) / (e^a + e^b), each written as 1 / (1 + e^(the other - it)).
GR_BINARY_GRAD(logaddexp, (true, true), false) {
  return TensorList{needs[0] ? g / (exp(other - self) + 1) : Tensor(), needs[1] ? g / (exp(self - other) + 1) : Tensor()};
}

// d xlogy(a, b) = log(b) da + a / b db, with log(b)'s factor 0 where a is 0 (xlogy of the mask,
// as torch: NaN only where b is NaN).
GR_BINARY_GRAD(xlogy, (true, true), false) {
  return TensorList{needs[0] ? g * xlogy(self != 0, other) : Tensor(), needs[1] ? g * self / other : Tensor()};
}

// copysign(a, b) = |a| sign(b): d/da = result / a (0 at a = 0, as torch); b only gives the sign,
// so its gradient is zero.
GR_BINARY_GRAD(copysign, (true, false), true) {
  return TensorList{needs[0] ? g * where(self == 0, 0.0, result / self) : Tensor(),
                    needs[1] ? autograd::zero_grad_like(g) : Tensor()};
}

#define GR_BINARY_OP(name, F, dtypes, node, domain)                                                              \
  Tensor name(const Tensor& self, const Tensor& other) {                                                         \
    return autograd::record_binary(node, self, other, native::name(self, other), name##_saves, name##_grad);   \
  }
#define GR_BINARY_INPLACE(name, node, variants)                                                                  \
  Tensor& Tensor::name##_(const Tensor& other) const {                                                           \
    return autograd::record_binary_(node, #name "_", *this, other, [this, &other] { native::name##_(*this, other); }, \
                                    name##_saves, name##_grad);                                                  \
  }
// A number operand is a wrapped 0-d tensor (native::wrapped_scalar: it does not widen a float
// tensor) that never requires grad.
#define GR_BINARY_SCALAR(name, node)                                                                             \
  Tensor name(const Tensor& self, const Scalar& other) {                                                         \
    Tensor o = native::wrapped_scalar(self, other);                                                              \
    return autograd::record_binary(node, self, o, native::name(self, o), name##_saves, name##_grad);             \
  }
#define GR_BINARY_SCALAR_INPLACE(name, node, variants)                                                           \
  Tensor& Tensor::name##_(const Scalar& other) const {                                                           \
    Tensor o = native::wrapped_scalar(*this, other);                                                             \
    return autograd::record_binary_(node, #name "_", *this, o, [this, &o] { native::name##_(*this, o); },        \
                                    name##_saves, name##_grad);                                                  \
  }
#define GR_BINARY_SCALAR_SELF(name, node)                                                                        \
  Tensor name(const Scalar& self, const Tensor& other) {                                                         \
    Tensor s = native::wrapped_scalar(other, self);                                                              \
    return autograd::record_binary(node, s, other, native::name(s, other), name##_saves, name##_grad);          \
  }
#include "core/native/elementwise/math_ops.def"

namespace {

// lerp(a, b, w) = a + w (b - a): da = 1 - w, db = w, dw = b - a.
TensorList lerp_grad(const Tensor& g, const TensorList& in, const Tensor&, const std::vector<bool>& needs) {
  const Tensor &a = in[0], &b = in[1], &w = in[2];
  return TensorList{needs[0] ? g * (1 - w) : Tensor(), needs[1] ? g * w : Tensor(), needs[2] ? g * (b - a) : Tensor()};
}
// Which of (a, b, w) the backward reads: w for a's and b's gradients, a and b for w's.
Saves lerp_saves(const Tensor& self, const Tensor& end, const Tensor& weight) {
  const bool w_grad = weight.requires_grad();
  return Saves{{w_grad, w_grad, self.requires_grad() || end.requires_grad()}};
}

}  // namespace

Tensor lerp(const Tensor& self, const Tensor& end, const Scalar& weight) {
  const double w = weight.to_double();
  return autograd::record_elementwise(
      "LerpBackward0", {self, end}, native::lerp(self, end, weight), Saves{},
      [w](const Tensor& g, const TensorList&, const Tensor&, const std::vector<bool>& needs) {
        return TensorList{needs[0] ? g * (1 - w) : Tensor(), needs[1] ? g * w : Tensor()};
      });
}
Tensor lerp(const Tensor& self, const Tensor& end, const Tensor& weight) {
  return autograd::record_elementwise("LerpBackward1", {self, end, weight}, native::lerp(self, end, weight),
                                      lerp_saves(self, end, weight), lerp_grad);
}
Tensor& Tensor::lerp_(const Tensor& end, const Scalar& weight) const {
  const double w = weight.to_double();
  return autograd::record_elementwise_(
      "LerpBackward0", "lerp_", *this, {end}, [this, &end, &weight] { native::lerp_(*this, end, weight); }, Saves{},
      [w](const Tensor& g, const TensorList&, const Tensor&, const std::vector<bool>& needs) {
        return TensorList{needs[0] ? g * (1 - w) : Tensor(), needs[1] ? g * w : Tensor()};
      });
}
Tensor& Tensor::lerp_(const Tensor& end, const Tensor& weight) const {
  return autograd::record_elementwise_("LerpBackward1", "lerp_", *this, {end, weight},
                                       [this, &end, &weight] { native::lerp_(*this, end, weight); },
                                       lerp_saves(*this, end, weight), lerp_grad);
}

}  // namespace gr
