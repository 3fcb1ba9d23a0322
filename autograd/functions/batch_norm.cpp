// batch_norm (training with batch statistics and running-stat updates, or eval with the
// running statistics) with backward, built from the native pieces SyncBatchNorm shares;
// under create_graph the backward is written with gr:: ops (Note [Double backward]).
#include "autograd/function.h"
#include "autograd/ops.h"
#include "core/factory.h"
#include "core/native/norm/batch_norm.h"
#include "core/native/copy/copy.h"
#include "core/native/elementwise/elementwise.h"

namespace gr {

using autograd::record;
using autograd::SavedTensor;

namespace {

void check_running(const Tensor& t, const Tensor& input, int64_t C, const char* name) {
  if (!t.defined()) return;
  GR_CHECK(t.dim() == 1 && t.size(0) == C, "batch_norm: expected ", name, " of shape [", C, "] for input of shape ",
           input.sizes(), ", got ", t.sizes());
  GR_CHECK(t.scalar_type() == input.scalar_type() && t.device() == input.device(), "batch_norm: expected ", name,
           " to be ", input.toString(), ", got ", t.toString());
}

// The backward of batch_norm written with gr:: ops, for create_graph (the fused kernels
// serve first-order passes). In training the statistics are recomputed from x so that their
// own dependence on x is differentiated too.
TensorList batch_norm_backward_differentiable(const Tensor& g, const Tensor& x, const Tensor& w, const Tensor& mean,
                                              const Tensor& invstd, bool training, double eps,
                                              const std::vector<bool>& needs) {
  std::vector<int64_t> channel_shape(static_cast<size_t>(x.dim()), 1), reduce = {0};
  channel_shape[1] = x.size(1);
  for (int64_t d = 2; d < x.dim(); ++d) reduce.push_back(d);
  Tensor m = mean.view(channel_shape), is = invstd.view(channel_shape);
  if (training) {
    m = x.mean(reduce, true);
    Tensor centered = x - m;
    is = ((centered * centered).mean(reduce, true) + eps).pow(-0.5);
  }
  Tensor xhat = (x - m) * is;
  TensorList grads(3);
  if (needs[0]) {
    Tensor gxhat = w.defined() ? g * w.view(channel_shape) : g;
    // d/dx of (x - mean) * invstd with batch statistics: invstd * (gxhat - mean(gxhat) - xhat * mean(gxhat * xhat)).
    grads[0] = training ? is * (gxhat - gxhat.mean(reduce, true) - xhat * (gxhat * xhat).mean(reduce, true))
                        : gxhat * is;
  }
  if (needs[1]) grads[1] = (g * xhat).sum(reduce);
  if (needs.size() > 2 && needs[2]) grads[2] = g.sum(reduce);
  return grads;
}

}  // namespace

Tensor batch_norm(const Tensor& input, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                  const Tensor& running_var, bool training, double momentum, double eps) {
  const native::BatchNormShape s = native::batch_norm_shape(input, "batch_norm");
  const int64_t count = s.N * s.S;  // values per channel
  check_running(running_mean, input, s.C, "running_mean");
  check_running(running_var, input, s.C, "running_var");
  GR_CHECK(eps > 0, "batch_norm: eps must be positive, got ", eps);
  Tensor mean, invstd;
  if (training) {
    GR_CHECK(count > 1, "batch_norm: expected more than 1 value per channel when training, got input of shape ",
             input.sizes());
    std::tie(mean, invstd) = native::batch_norm_stats(input, eps);
    native::batch_norm_update_stats(running_mean, running_var, mean, invstd, momentum, eps, count);
  } else {
    GR_CHECK(running_mean.defined() && running_var.defined(),
             "batch_norm: running_mean and running_var must be defined in evaluation mode");
    // Copies: a later training step updates the running stats in place before this backward may run.
    mean = native::clone(running_mean);
    invstd = native::pow(native::add(running_var, native::wrapped_scalar(running_var, eps)), -0.5);
  }
  Tensor out = native::batch_norm_elemt(input, weight, bias, mean, invstd);
  if (autograd::needs_grad(input, weight, bias)) {
    record("NativeBatchNormBackward0", {input, weight, bias}, {out},
           [sx = SavedTensor(input), sw = SavedTensor(weight), mean, invstd, training, count, eps](
               const TensorList& g, const std::vector<bool>& needs) {
             Tensor x = sx.unpack(), w = sw.unpack();
             if (autograd::needs_grad(g[0], x, w))
               return batch_norm_backward_differentiable(g[0], x, w, mean, invstd, training, eps, needs);
             TensorList grads(3);
             native::BatchNormBackwardReduce r;
             if (training || needs[1] || needs[2]) {
               r = native::batch_norm_backward_reduce(g[0], x, mean, invstd, needs[1], needs[2]);
             }
             if (needs[0]) {
               if (training) {
                 grads[0] = native::batch_norm_backward_elemt(g[0], x, mean, invstd, w, r.sum_dy, r.sum_dy_xmu, count);
               } else {  // the statistics are constants: grad_in = dy * invstd * weight
                 grads[0] = native::batch_norm_elemt(g[0], w, {}, zeros_like(mean), invstd);
               }
             }
             grads[1] = r.grad_weight;
             grads[2] = r.grad_bias;
             return grads;
           });
  }
  return out;
}

}  // namespace gr
