// max_pool2d (with indices), avg_pool2d and adaptive_avg_pool2d with backward; fused
// kernels on first-order passes, differentiable ops under create_graph (Note [Linear maps]).
#include "autograd/function.h"
#include "autograd/functions/linear_map.h"
#include "autograd/ops.h"
#include "core/factory.h"
#include "core/native/pooling/pooling.h"

namespace gr {

using autograd::SavedTensor;

std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                                                   IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  native::Pool2dGeometry g =
      native::pool2d_geometry("max_pool2d", input, kernel_size, stride, padding, dilation, ceil_mode);
  auto [out, indices] = native::max_pool2d_with_indices(input, g);
  if (autograd::needs_grad(input)) {
    autograd::record("MaxPool2DWithIndicesBackward0", {input}, {out},
                     [si = SavedTensor(indices), sizes = input.sizes().vec(), g](const TensorList& grads,
                                                                                 const std::vector<bool>&) {
                       if (!autograd::needs_grad(grads[0]))
                         return TensorList{native::max_pool2d_backward(grads[0], si.unpack(), sizes, g)};
                       // Under create_graph: the same scatter of the gradient to each window's
                       // argmax (flat h * W + w per plane), as a differentiable scatter_add
                       // whose own backward gathers.
                       Tensor idx = si.unpack().flatten(-2);
                       std::vector<int64_t> flat(sizes.begin(), sizes.end() - 1);
                       flat.back() = sizes[sizes.size() - 2] * sizes.back();
                       Tensor zero = zeros(flat, grads[0].options());
                       return TensorList{scatter_add(zero, -1, idx, grads[0].flatten(-2)).view(sizes)};
                     });
  }
  return {out, indices};
}

Tensor max_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  IntArrayRef dilation, bool ceil_mode) {
  return std::get<0>(max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode));
}

Tensor avg_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding, bool ceil_mode,
                  bool count_include_pad) {
  native::Pool2dGeometry g = native::pool2d_geometry("avg_pool2d", input, kernel_size, stride, padding, 1, ceil_mode);
  auto p = std::make_shared<const autograd::LinearMap>(autograd::LinearMap{
      "AvgPool2DBackward0", "AvgPool2DBackwardBackward0",
      [g, count_include_pad](const Tensor& x) { return native::avg_pool2d(x, g, count_include_pad); },
      [g, count_include_pad, sizes = input.sizes().vec()](const Tensor& go) {
        return native::avg_pool2d_backward(go, sizes, g, count_include_pad);
      }});
  return autograd::apply_linear_map(p, input);
}

Tensor adaptive_avg_pool2d(const Tensor& input, IntArrayRef output_size) {
  native::Pool2dGeometry g = native::adaptive_pool2d_geometry("adaptive_avg_pool2d", input, output_size);
  auto p = std::make_shared<const autograd::LinearMap>(autograd::LinearMap{
      "AdaptiveAvgPool2DBackward0", "AdaptiveAvgPool2DBackwardBackward0",
      [g](const Tensor& x) { return native::adaptive_avg_pool2d(x, g); },
      [g, sizes = input.sizes().vec()](const Tensor& go) { return native::adaptive_avg_pool2d_backward(go, sizes, g); }});
  return autograd::apply_linear_map(p, input);
}

}  // namespace gr
