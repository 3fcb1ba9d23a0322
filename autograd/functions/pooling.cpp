// max_pool2d (with indices), avg_pool2d and adaptive_avg_pool2d with backward; fused
// kernels on first-order passes, differentiable ops under create_graph (Note [Linear pooling]).
#include <functional>
#include <memory>

#include "autograd/function.h"
#include "autograd/ops.h"
#include "core/factory.h"
#include "core/native/pooling.h"

namespace gr {

using autograd::SavedTensor;

std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                                                   IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  native::Pool2dGeometry g =
      native::pool2d_geometry("max_pool2d", input, kernel_size, stride, padding, dilation, ceil_mode);
  auto [out, indices] = native::max_pool2d_with_indices(input, g);
  if (autograd::needs_grad(input)) {
    autograd::record("MaxPool2DWithIndicesBackward", {input}, {out},
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

namespace {

// Note [Linear pooling]
// Average pooling is a linear map P; its gradient is the adjoint P^T, and the adjoint's
// gradient is P again. Recording both as differentiable ops makes average pooling
// differentiable to any order, with the native kernels on every path.
struct LinearPool {
  const char* name;          // the node of P, e.g. "AvgPool2DBackward"
  const char* adjoint_name;  // the node of P^T
  std::function<Tensor(const Tensor&)> apply, adjoint;
};
using LinearPoolPtr = std::shared_ptr<const LinearPool>;

// P(x), or P^T(x) when `adjoint`; each records the other as its backward.
Tensor pool(const LinearPoolPtr& p, const Tensor& x, bool adjoint) {
  Tensor out = adjoint ? p->adjoint(x) : p->apply(x);
  if (autograd::needs_grad(x))
    autograd::record(adjoint ? p->adjoint_name : p->name, {x}, {out},
                     [p, adjoint](const TensorList& g, const std::vector<bool>&) {
                       return TensorList{pool(p, g[0], !adjoint)};
                     });
  return out;
}

}  // namespace

Tensor avg_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding, bool ceil_mode,
                  bool count_include_pad) {
  native::Pool2dGeometry g = native::pool2d_geometry("avg_pool2d", input, kernel_size, stride, padding, 1, ceil_mode);
  auto p = std::make_shared<const LinearPool>(LinearPool{
      "AvgPool2DBackward", "AvgPool2DBackwardBackward",
      [g, count_include_pad](const Tensor& x) { return native::avg_pool2d(x, g, count_include_pad); },
      [g, count_include_pad, sizes = input.sizes().vec()](const Tensor& go) {
        return native::avg_pool2d_backward(go, sizes, g, count_include_pad);
      }});
  return pool(p, input, false);
}

Tensor adaptive_avg_pool2d(const Tensor& input, IntArrayRef output_size) {
  native::Pool2dGeometry g = native::adaptive_pool2d_geometry("adaptive_avg_pool2d", input, output_size);
  auto p = std::make_shared<const LinearPool>(LinearPool{
      "AdaptiveAvgPool2DBackward", "AdaptiveAvgPool2DBackwardBackward",
      [g](const Tensor& x) { return native::adaptive_avg_pool2d(x, g); },
      [g, sizes = input.sizes().vec()](const Tensor& go) { return native::adaptive_avg_pool2d_backward(go, sizes, g); }});
  return pool(p, input, false);
}

}  // namespace gr
