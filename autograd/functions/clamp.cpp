// clamp, clamp_min, clamp_max and clip with number or tensor bounds (out of place and in
// place) with backward. The gradient flows to the input where it lies within the bounds (ties
// included) and to a tensor bound where that bound is the result, as torch's.
#include "autograd/functions/elementwise_grad.h"
#include "core/native/elementwise/elementwise_math.h"

namespace gr {

using autograd::Saves;

namespace {

autograd::ElementwiseGradFn scalar_bounds_grad(const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  return [min, max](const Tensor& g, const TensorList& in, const Tensor&, const std::vector<bool>&) {
    const Tensor& x = in[0];
    Tensor inside;
    if (min) inside = x >= *min;
    if (max) inside = inside.defined() ? logical_and(inside, x <= *max) : x <= *max;
    return TensorList{where(inside, g, 0.0)};
  };
}

// Inputs (x, min?, max?) in that order. With min > max the result is max: min gets nothing.
autograd::ElementwiseGradFn tensor_bounds_grad(bool has_min, bool has_max) {
  return [has_min, has_max](const Tensor& g, const TensorList& in, const Tensor&, const std::vector<bool>& needs) {
    const Tensor& x = in[0];
    Tensor lo = has_min ? in[1] : Tensor(), hi = has_max ? in[has_min ? 2 : 1] : Tensor();
    TensorList grads;
    if (has_min && has_max) {
      grads.push_back(needs[0] ? where(logical_and(x >= lo, x <= hi), g, 0.0) : Tensor());
      grads.push_back(needs[1] ? where(logical_and(x < lo, lo < hi), g, 0.0) : Tensor());
      grads.push_back(needs[2] ? where(logical_or(x > hi, hi < lo), g, 0.0) : Tensor());
    } else if (has_min) {
      grads.push_back(needs[0] ? where(x >= lo, g, 0.0) : Tensor());
      grads.push_back(needs[1] ? where(x < lo, g, 0.0) : Tensor());
    } else {
      grads.push_back(needs[0] ? where(x <= hi, g, 0.0) : Tensor());
      grads.push_back(needs[1] ? where(x > hi, g, 0.0) : Tensor());
    }
    return grads;
  };
}

bool given(const std::optional<Tensor>& t) { return t && t->defined(); }

TensorList with_bounds(const Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  TensorList inputs{self};
  if (given(min)) inputs.push_back(*min);
  if (given(max)) inputs.push_back(*max);
  return inputs;
}

// The node names follow ATen's overloads: clamp with Scalar bounds is ClampBackward1, with
// Tensor bounds ClampBackward0; clamp_min/clamp_max are their own ops (ClampMinBackward0 for
// the Scalar overload, ...1 for the Tensor one).
Tensor clamp_scalar(const char* node, const Tensor& self, const std::optional<Scalar>& min,
                    const std::optional<Scalar>& max) {
  return autograd::record_elementwise(node, {self}, native::clamp(self, min, max), Saves{{true}},
                                      scalar_bounds_grad(min, max));
}
Tensor clamp_tensor(const char* node, const Tensor& self, const std::optional<Tensor>& min,
                    const std::optional<Tensor>& max) {
  TensorList inputs = with_bounds(self, min, max);
  return autograd::record_elementwise(node, inputs, native::clamp(self, min, max),
                                      Saves{std::vector<bool>(inputs.size(), true)},
                                      tensor_bounds_grad(given(min), given(max)));
}
Tensor& clamp_scalar_(const char* node, const Tensor& self, const std::optional<Scalar>& min,
                      const std::optional<Scalar>& max) {
  return autograd::record_elementwise_(node, "clamp_", self, {}, [&] { native::clamp_(self, min, max); },
                                       Saves{{true}}, scalar_bounds_grad(min, max));
}
Tensor& clamp_tensor_(const char* node, const Tensor& self, const std::optional<Tensor>& min,
                      const std::optional<Tensor>& max) {
  TensorList inputs = with_bounds(self, min, max);
  return autograd::record_elementwise_(node, "clamp_", self, TensorList(inputs.begin() + 1, inputs.end()),
                                       [&] { native::clamp_(self, min, max); },
                                       Saves{std::vector<bool>(inputs.size(), true)},
                                       tensor_bounds_grad(given(min), given(max)));
}

}  // namespace

Tensor clamp(const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  return clamp_scalar("ClampBackward1", self, min, max);
}
Tensor clamp(const Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  return clamp_tensor("ClampBackward0", self, min, max);
}
Tensor& Tensor::clamp_(const std::optional<Scalar>& min, const std::optional<Scalar>& max) const {
  return clamp_scalar_("ClampBackward1", *this, min, max);
}
Tensor& Tensor::clamp_(const std::optional<Tensor>& min, const std::optional<Tensor>& max) const {
  return clamp_tensor_("ClampBackward0", *this, min, max);
}

Tensor clamp_min(const Tensor& self, const Scalar& min) { return clamp_scalar("ClampMinBackward0", self, min, std::nullopt); }
Tensor clamp_min(const Tensor& self, const Tensor& min) {
  return clamp_tensor("ClampMinBackward1", self, std::optional<Tensor>(min), std::nullopt);
}
Tensor clamp_max(const Tensor& self, const Scalar& max) { return clamp_scalar("ClampMaxBackward0", self, std::nullopt, max); }
Tensor clamp_max(const Tensor& self, const Tensor& max) {
  return clamp_tensor("ClampMaxBackward1", self, std::nullopt, std::optional<Tensor>(max));
}
Tensor clip(const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  return clamp(self, min, max);
}
Tensor clip(const Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  return clamp(self, min, max);
}

Tensor& Tensor::clamp_min_(const Scalar& min) const { return clamp_scalar_("ClampMinBackward0", *this, min, std::nullopt); }
Tensor& Tensor::clamp_min_(const Tensor& min) const {
  return clamp_tensor_("ClampMinBackward1", *this, std::optional<Tensor>(min), std::nullopt);
}
Tensor& Tensor::clamp_max_(const Scalar& max) const { return clamp_scalar_("ClampMaxBackward0", *this, std::nullopt, max); }
Tensor& Tensor::clamp_max_(const Tensor& max) const {
  return clamp_tensor_("ClampMaxBackward1", *this, std::nullopt, std::optional<Tensor>(max));
}
Tensor& Tensor::clip_(const std::optional<Scalar>& min, const std::optional<Scalar>& max) const {
  return clamp_(min, max);
}
Tensor& Tensor::clip_(const std::optional<Tensor>& min, const std::optional<Tensor>& max) const {
  return clamp_(min, max);
}

}  // namespace gr
