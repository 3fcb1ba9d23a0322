// max_pool2d (with indices), avg_pool2d and adaptive_avg_pool2d with backward.
#include "autograd/function.h"
#include "autograd/ops.h"
#include "core/native/pooling.h"

namespace gr {

using autograd::record;
using autograd::SavedTensor;

std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                                                   IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  native::Pool2dGeometry g =
      native::pool2d_geometry("max_pool2d", input, kernel_size, stride, padding, dilation, ceil_mode);
  auto [out, indices] = native::max_pool2d_with_indices(input, g);
  if (autograd::needs_grad(input)) {
    record("MaxPool2DWithIndicesBackward", {input}, {out},
           [si = SavedTensor(indices), sizes = input.sizes().vec(), g](const TensorList& grads, const std::vector<bool>&) {
             return TensorList{native::max_pool2d_backward(grads[0], si.unpack(), sizes, g)};
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
  Tensor out = native::avg_pool2d(input, g, count_include_pad);
  if (autograd::needs_grad(input)) {
    record("AvgPool2DBackward", {input}, {out},
           [sizes = input.sizes().vec(), g, count_include_pad](const TensorList& grads, const std::vector<bool>&) {
             return TensorList{native::avg_pool2d_backward(grads[0], sizes, g, count_include_pad)};
           });
  }
  return out;
}

Tensor adaptive_avg_pool2d(const Tensor& input, IntArrayRef output_size) {
  native::Pool2dGeometry g = native::adaptive_pool2d_geometry("adaptive_avg_pool2d", input, output_size);
  Tensor out = native::adaptive_avg_pool2d(input, g);
  if (autograd::needs_grad(input)) {
    record("AdaptiveAvgPool2DBackward", {input}, {out},
           [sizes = input.sizes().vec(), g](const TensorList& grads, const std::vector<bool>&) {
             return TensorList{native::adaptive_avg_pool2d_backward(grads[0], sizes, g)};
           });
  }
  return out;
}

}  // namespace gr
