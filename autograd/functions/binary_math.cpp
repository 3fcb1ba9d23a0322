// atan2, hypot and lerp (out of place and in place) with backward.
#include "autograd/functions/elementwise_grad.h"
#include "core/native/elementwise_math.h"

namespace gr {

using autograd::Saves;

namespace {

// d atan2(a, b) = (b da - a db) / (a^2 + b^2).
TensorList atan2_grad(const Tensor& g, const TensorList& in, const Tensor&, const std::vector<bool>& needs) {
  const Tensor &a = in[0], &b = in[1];
  Tensor scale = g / (square(a) + square(b));
  return TensorList{needs[0] ? scale * b : Tensor(), needs[1] ? scale * -a : Tensor()};
}

// d hypot(a, b) = (a da + b db) / hypot(a, b).
TensorList hypot_grad(const Tensor& g, const TensorList& in, const Tensor& out, const std::vector<bool>& needs) {
  Tensor scale = g / out;
  return TensorList{needs[0] ? scale * in[0] : Tensor(), needs[1] ? scale * in[1] : Tensor()};
}

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

Tensor atan2(const Tensor& self, const Tensor& other) {
  return autograd::record_elementwise("Atan2Backward0", {self, other}, native::atan2(self, other), Saves{{true, true}},
                                      atan2_grad);
}
Tensor& Tensor::atan2_(const Tensor& other) const {
  return autograd::record_elementwise_("Atan2Backward0", "atan2_", *this, {other},
                                       [this, &other] { native::atan2_(*this, other); }, Saves{{true, true}},
                                       atan2_grad);
}
Tensor Tensor::atan2(const Tensor& other) const { return gr::atan2(*this, other); }

Tensor hypot(const Tensor& self, const Tensor& other) {
  return autograd::record_elementwise("HypotBackward0", {self, other}, native::hypot(self, other),
                                      Saves{{true, true}, true}, hypot_grad);
}
Tensor& Tensor::hypot_(const Tensor& other) const {
  return autograd::record_elementwise_("HypotBackward0", "hypot_", *this, {other},
                                       [this, &other] { native::hypot_(*this, other); }, Saves{{true, true}, true},
                                       hypot_grad);
}
Tensor Tensor::hypot(const Tensor& other) const { return gr::hypot(*this, other); }

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
Tensor Tensor::lerp(const Tensor& end, const Scalar& weight) const { return gr::lerp(*this, end, weight); }
Tensor Tensor::lerp(const Tensor& end, const Tensor& weight) const { return gr::lerp(*this, end, weight); }

}  // namespace gr
