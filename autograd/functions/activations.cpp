// relu (and relu_), sigmoid and tanh with backward; each backward reads the output.
#include "autograd/function.h"
#include "autograd/ops.h"
#include "core/native/elementwise.h"

namespace gr {

using autograd::record;
using autograd::SavedTensor;

namespace {
template <class GradFn>
Tensor with_output_grad(const char* name, const Tensor& a, const Tensor& out, GradFn grad_fn) {
  if (autograd::needs_grad(a)) {
    SavedTensor saved(out);
    record(name, {a}, {out}, [saved, grad_fn](const TensorList& g, const std::vector<bool>&) {
      return TensorList{grad_fn(g[0], saved.unpack())};
    });
  }
  return out;
}
}  // namespace

Tensor relu(const Tensor& a) { return with_output_grad("ReluBackward", a, native::relu(a), native::relu_backward); }
Tensor sigmoid(const Tensor& a) {
  return with_output_grad("SigmoidBackward", a, native::sigmoid(a), native::sigmoid_backward);
}
Tensor tanh(const Tensor& a) { return with_output_grad("TanhBackward", a, native::tanh(a), native::tanh_backward); }

Tensor& Tensor::relu_() const {
  autograd::check_inplace(*this, "relu_");
  bool grad = autograd::needs_grad(*this);
  TensorList inputs = grad ? TensorList{*this} : TensorList{};
  native::relu_(*this);
  if (grad) {
    // Saved after the op: the version check then guards against later in-place changes.
    SavedTensor saved(*this);
    record("ReluBackward", inputs, {*this}, [saved](const TensorList& g, const std::vector<bool>&) {
      return TensorList{native::relu_backward(g[0], saved.unpack())};
    });
  }
  return const_cast<Tensor&>(*this);
}

}  // namespace gr
