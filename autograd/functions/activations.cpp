// relu (and relu_), sigmoid and tanh with backward; each backward reads the output. The
// fused native backward kernels serve first-order passes; under create_graph the same
// formula is written with gr:: ops (Note [Double backward]).
#include "autograd/function.h"
#include "autograd/ops.h"
#include "core/native/elementwise/elementwise.h"

namespace gr {

using autograd::record;
using autograd::SavedTensor;

namespace {
// Gradient of relu from its output y: g where y > 0 (the mask is piecewise constant).
Tensor relu_grad(const Tensor& g, const Tensor& y) {
  if (!autograd::needs_grad(g)) return native::relu_backward(g, y);
  return gr::where(native::gt(y, native::wrapped_scalar(y, 0)), g, 0);
}
// g * y * (1 - y)
Tensor sigmoid_grad(const Tensor& g, const Tensor& y) {
  if (!autograd::needs_grad(g, y)) return native::sigmoid_backward(g, y);
  return g * (y * (1.0 - y));
}
// g * (1 - y^2)
Tensor tanh_grad(const Tensor& g, const Tensor& y) {
  if (!autograd::needs_grad(g, y)) return native::tanh_backward(g, y);
  return g * (1.0 - y * y);
}

Tensor with_output_grad(const char* name, const Tensor& a, const Tensor& out, Tensor (*grad_fn)(const Tensor&, const Tensor&)) {
  if (autograd::needs_grad(a)) {
    SavedTensor saved(out, /*is_output=*/true);
    record(name, {a}, {out}, [saved, grad_fn](const TensorList& g, const std::vector<bool>&) {
      return TensorList{grad_fn(g[0], saved.unpack())};
    });
  }
  return out;
}
}  // namespace

Tensor relu(const Tensor& a) { return with_output_grad("ReluBackward0", a, native::relu(a), relu_grad); }
Tensor sigmoid(const Tensor& a) { return with_output_grad("SigmoidBackward0", a, native::sigmoid(a), sigmoid_grad); }
Tensor tanh(const Tensor& a) { return with_output_grad("TanhBackward0", a, native::tanh(a), tanh_grad); }

Tensor& Tensor::relu_() const {
  autograd::check_inplace(*this, "relu_");
  bool grad = autograd::needs_grad(*this);
  TensorList inputs = grad ? TensorList{*this} : TensorList{};
  native::relu_(*this);
  if (grad) {
    // Saved after the op: the version check then guards against later in-place changes.
    SavedTensor saved(*this, /*is_output=*/true);
    record("ReluBackward0", inputs, {*this}, [saved](const TensorList& g, const std::vector<bool>&) {
      return TensorList{relu_grad(g[0], saved.unpack())};
    });
  }
  return const_cast<Tensor&>(*this);
}

}  // namespace gr
