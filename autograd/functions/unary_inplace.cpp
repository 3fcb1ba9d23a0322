// In-place forms of the older unary ops (neg_, abs_, exp_, log_, sqrt_, sigmoid_, tanh_; their
// out-of-place forms live in unary_math.cpp and activations.cpp), with differentiable backwards.
#include "autograd/functions/elementwise_grad.h"
#include "core/native/elementwise/elementwise_math.h"

namespace gr {

#define GR_DEFINE_INPLACE_UNARY(name, node, saves_output, formula)                                           \
  namespace {                                                                                               \
  Tensor name##_inplace_grad(const Tensor& g, const Tensor& s) { return formula; }                          \
  }                                                                                                         \
  Tensor& Tensor::name##_() const {                                                                         \
    return autograd::record_unary_(node, #name "_", *this, [this] { native::name##_(*this); }, saves_output, \
                                   name##_inplace_grad);                                                    \
  }
GR_DEFINE_INPLACE_UNARY(abs, "AbsBackward0", false, g * sign(s))
GR_DEFINE_INPLACE_UNARY(exp, "ExpBackward0", true, g * s)
GR_DEFINE_INPLACE_UNARY(log, "LogBackward0", false, g / s)
GR_DEFINE_INPLACE_UNARY(sqrt, "SqrtBackward0", true, g / (2 * s))
GR_DEFINE_INPLACE_UNARY(sigmoid, "SigmoidBackward0", true, g * (s * (1 - s)))
GR_DEFINE_INPLACE_UNARY(tanh, "TanhBackward0", true, g * (1 - square(s)))
#undef GR_DEFINE_INPLACE_UNARY

// Nothing to save: the gradient is -g.
Tensor& Tensor::neg_() const {
  return autograd::record_elementwise_(
      "NegBackward0", "neg_", *this, {}, [this] { native::neg_(*this); }, autograd::Saves{},
      [](const Tensor& g, const TensorList&, const Tensor&, const std::vector<bool>&) { return TensorList{-g}; });
}

}  // namespace gr
