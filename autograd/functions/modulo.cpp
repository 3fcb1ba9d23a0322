// fmod and remainder (out of place and in place, tensor or number divisor) with backward.
#include "autograd/functions/elementwise_grad.h"
#include "core/native/elementwise/elementwise_math.h"

namespace gr {

using autograd::Saves;

namespace {
// fmod and remainder: d/da = 1; d/db = -(a / b rounded toward zero for fmod, down for remainder).
template <bool kFloorQuotient>
TensorList modulo_grad(const Tensor& g, const TensorList& in, const Tensor&, const std::vector<bool>& needs) {
  Tensor gb;
  if (needs[1]) {
    Tensor q = in[0] / in[1];
    gb = g * -(kFloorQuotient ? floor(q) : trunc(q));
  }
  return TensorList{needs[0] ? g : Tensor(), gb};
}
// The quotient is needed only for the divisor's gradient.
Saves modulo_saves(const Tensor& other) { return Saves{{other.requires_grad(), other.requires_grad()}}; }
template <bool floor_quotient>
Tensor modulo(const char* node, const Tensor& self, const Tensor& other, Tensor out) {
  return autograd::record_elementwise(node, {self, other}, out, modulo_saves(other), modulo_grad<floor_quotient>);
}
template <bool floor_quotient, class Kernel>
Tensor& modulo_(const char* node, const char* op, const Tensor& self, const Tensor& other, const Kernel& kernel) {
  return autograd::record_elementwise_(node, op, self, {other}, kernel, modulo_saves(other), modulo_grad<floor_quotient>);
}
}  // namespace

// The Scalar overloads are their own ATen ops (fmod.Scalar is FmodBackward0, fmod.Tensor FmodBackward1).
#define GR_DEFINE_MODULO_OP(name, tensor_node, scalar_node, floor_quotient)                                     \
  Tensor name(const Tensor& self, const Tensor& other) {                                                        \
    return modulo<floor_quotient>(tensor_node, self, other, native::name(self, other));                         \
  }                                                                                                             \
  Tensor name(const Tensor& self, const Scalar& other) {                                                        \
    Tensor s = native::wrapped_scalar(self, other);                                                             \
    return modulo<floor_quotient>(scalar_node, self, s, native::name(self, s));                                 \
  }                                                                                                             \
  Tensor& Tensor::name##_(const Tensor& other) const {                                                          \
    return modulo_<floor_quotient>(tensor_node, #name "_", *this, other, [this, &other] { native::name##_(*this, other); }); \
  }                                                                                                             \
  Tensor& Tensor::name##_(const Scalar& other) const {                                                          \
    Tensor s = native::wrapped_scalar(*this, other);                                                            \
    return modulo_<floor_quotient>(scalar_node, #name "_", *this, s, [this, &s] { native::name##_(*this, s); }); \
  }
GR_DEFINE_MODULO_OP(fmod, "FmodBackward1", "FmodBackward0", false)
GR_DEFINE_MODULO_OP(remainder, "RemainderBackward1", "RemainderBackward0", true)
#undef GR_DEFINE_MODULO_OP

Tensor remainder(const Scalar& self, const Tensor& other) { return remainder(native::wrapped_scalar(other, self), other); }

}  // namespace gr
