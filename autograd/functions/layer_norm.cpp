// layer_norm with backward: the fused row kernels (core/native/norm/layer_norm.h) serve the
// forward and first-order backward; under create_graph the backward is written with gr::
// ops, recomputing the statistics from x so their dependence on x is differentiated too
// (Note [Double backward]).
#include "autograd/autocast.h"
#include "autograd/function.h"
#include "autograd/ops.h"
#include "core/native/norm/layer_norm.h"

namespace gr {

using autograd::record;
using autograd::SavedTensor;

namespace {

TensorList layer_norm_backward_differentiable(const Tensor& g, const Tensor& x, const Tensor& w,
                                              const std::vector<int64_t>& shape, double eps,
                                              const std::vector<bool>& needs) {
  std::vector<int64_t> dims;
  for (int64_t d = x.dim() - static_cast<int64_t>(shape.size()); d < x.dim(); ++d) dims.push_back(d);
  Tensor centered = x - x.mean(dims, true);
  Tensor rstd = ((centered * centered).mean(dims, true) + eps).pow(-0.5);
  Tensor xhat = centered * rstd;
  TensorList grads(3);
  if (needs[0]) {
    Tensor gxhat = w.defined() ? g * w : g;
    grads[0] = rstd * (gxhat - gxhat.mean(dims, true) - xhat * (gxhat * xhat).mean(dims, true));
  }
  if (needs.size() > 1 && needs[1]) grads[1] = autograd::sum_to(g * xhat, shape);
  if (needs.size() > 2 && needs[2]) grads[2] = autograd::sum_to(g, shape);
  return grads;
}

}  // namespace

Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight, const Tensor& bias,
                  double eps, bool cudnn_enable) {
  GR_AUTOCAST(layer_norm, input, normalized_shape, weight, bias, eps, cudnn_enable);
  auto [out, mean, rstd] = native::layer_norm(input, normalized_shape, weight, bias, eps);
  if (autograd::needs_grad(input, weight, bias)) {
    std::vector<int64_t> shape(normalized_shape.begin(), normalized_shape.end());
    record("NativeLayerNormBackward0", {input, weight, bias}, {out},
           [sx = SavedTensor(input), sw = SavedTensor(weight), mean, rstd, shape, eps](
               const TensorList& g, const std::vector<bool>& needs) {
             Tensor x = sx.unpack(), w = sw.unpack();
             if (autograd::needs_grad(g[0], x, w))
               return layer_norm_backward_differentiable(g[0], x, w, shape, eps, needs);
             auto [dx, gw, gb] = native::layer_norm_backward(g[0], x, shape, mean, rstd, w, needs[0],
                                                             needs.size() > 1 && needs[1], needs.size() > 2 && needs[2]);
             return TensorList{dx, gw, gb};
           });
  }
  return out;
}

}  // namespace gr
