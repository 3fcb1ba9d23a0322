// SyncBatchNorm: the training-mode forward (all-gather of per-rank statistics, count-weighted
// combine) and its backward (all-reduce of the two gradient sums), built from the native
// batch-norm pieces the local batch_norm uses. See Note [SyncBatchNorm exchanges].
#include "distributed/ddp/sync_batch_norm.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "autograd/function.h"
#include "autograd/ops.h"
#include "core/factory.h"
#include "core/tensor_literal.h"
#include "core/native/norm/batch_norm.h"
#include "core/native/copy/copy.h"
#include "core/native/shape/shape.h"
#include "distributed/backends/init.h"

namespace gr::distributed {

namespace {

// The exchanges run in float64 on CPU (exact counts, no rounding of the combine's inputs);
// float64 is CPU-only in gradring, so device tensors exchange float32.
ScalarType exchange_dtype(const Tensor& x) { return x.device().is_cpu() ? kFloat64 : kFloat32; }

struct GlobalStats {
  std::vector<double> mean, var;  // biased variance over every rank's values
  double count = 0;
};

// Combines the gathered [mean(C), invstd(C), count] of every rank with the pairwise
// parallel-variance update (Chan et al.): a rank with count 0 adds nothing.
GlobalStats combine(const std::vector<Tensor>& gathered, int64_t C, double eps) {
  GlobalStats g;
  g.mean.assign(C, 0.0);
  std::vector<double> m2(C, 0.0);  // sum of squared deviations from the running mean
  for (const Tensor& t : gathered) {
    Tensor h = native::contiguous(native::to_dtype(native::to_device(t, Device(kCPU)), kFloat64));
    const double* p = h.data_ptr<double>();
    const double n = p[2 * C];
    if (n <= 0) continue;
    const double total = g.count + n;
    for (int64_t c = 0; c < C; ++c) {
      const double is = p[C + c];
      const double var = std::max(0.0, 1.0 / (is * is) - eps);
      const double delta = p[c] - g.mean[c];
      g.mean[c] += delta * (n / total);
      m2[c] += var * n + delta * delta * (g.count * n / total);
    }
    g.count = total;
  }
  g.var.resize(C);
  for (int64_t c = 0; c < C; ++c) g.var[c] = g.count > 0 ? m2[c] / g.count : 0.0;
  return g;
}

// A [C] tensor of x's dtype and device holding `v`.
Tensor channel_tensor(const std::vector<double>& v, const Tensor& x) {
  return native::to_device(native::to_dtype(tensor(v, TensorOptions(kFloat64)), x.scalar_type()), x.device());
}

}  // namespace

SyncBatchNormBackend::SyncBatchNormBackend(ProcessGroupPtr group) : group_(std::move(group)) {
  GR_CHECK(group_ != nullptr, "SyncBatchNorm: the process group is null (pass a group, or init_process_group() first)");
}

Tensor SyncBatchNormBackend::forward(nn::BatchNorm2dImpl& bn, const Tensor& x, double momentum) {
  const int64_t C = bn.options.num_features();
  GR_CHECK(x.defined() && x.dim() == 4, "SyncBatchNorm: expected 4D input (got ", x.defined() ? x.dim() : 0,
           "D input)");
  GR_CHECK(x.size(1) == C, "SyncBatchNorm: expected ", C, " channels, got input of shape ", x.sizes());
  const double eps = bn.options.eps();
  if (group_->size() == 1) {
    return gr::batch_norm(x, bn.weight, bn.bias, bn.running_mean, bn.running_var, true, momentum, eps);
  }
  const native::BatchNormShape s = native::batch_norm_shape(x, "SyncBatchNorm");
  const ScalarType dt = exchange_dtype(x);

  // Local statistics, packed as [mean(C), invstd(C), count]; gathered, not summed: the
  // combine needs each rank's count next to its mean and variance.
  auto [local_mean, local_invstd] = native::batch_norm_stats(x, eps);
  Tensor packed = native::cat({native::to_dtype(local_mean, dt), native::to_dtype(local_invstd, dt),
                               full({1}, static_cast<double>(s.N * s.S), TensorOptions(dt).device(x.device()))},
                              0);
  std::vector<Tensor> gathered;
  for (int r = 0; r < group_->size(); ++r) gathered.push_back(empty_like(packed));
  wait_for(group_->allgather(gathered, packed), *group_, "SyncBatchNorm",
           "forward (all-gather of the batch statistics)");

  const GlobalStats g = combine(gathered, C, eps);
  const int64_t count = std::llround(g.count);
  // Every rank sees the same count, so every rank fails here together.
  GR_CHECK(count > 1, "SyncBatchNorm: expected more than 1 value per channel when training, got ", count,
           " over all ", group_->size(), " ranks (this rank's input has shape ", x.sizes(), ")");
  std::vector<double> invstd_v(C);
  for (int64_t c = 0; c < C; ++c) invstd_v[c] = 1.0 / std::sqrt(g.var[c] + eps);
  const Tensor mean = channel_tensor(g.mean, x), invstd = channel_tensor(invstd_v, x);
  // The global statistics on every rank: the running stats stay identical everywhere,
  // with the unbiased variance var * count / (count - 1).
  native::batch_norm_update_stats(bn.running_mean, bn.running_var, mean, invstd, momentum, eps, count);
  Tensor out = native::batch_norm_elemt(x, bn.weight, bn.bias, mean, invstd);

  if (autograd::needs_grad(x, bn.weight, bn.bias)) {
    // Native kernels and collectives: a second backward through it fails (Note [Double backward]).
    autograd::record_once_differentiable(
        "SyncBatchNormBackward", {x, bn.weight, bn.bias}, {out},
        [group = group_, sx = autograd::SavedTensor(x), sw = autograd::SavedTensor(bn.weight), mean, invstd, count, C,
         dt](const TensorList& grads_out, const std::vector<bool>& needs) {
          const Tensor& in = sx.unpack();
          const Tensor& w = sw.unpack();
          const Tensor& dy = grads_out[0];
          TensorList grads(3);
          native::BatchNormBackwardReduce r =
              native::batch_norm_backward_reduce(dy, in, mean, invstd, needs[1], needs[2]);
          if (needs[0]) {
            Tensor sums = native::cat({native::to_dtype(r.sum_dy, dt), native::to_dtype(r.sum_dy_xmu, dt)}, 0);
            wait_for(group->allreduce(sums, ReduceOp::Sum), *group, "SyncBatchNorm",
                     "backward (all-reduce of the gradient sums)");
            Tensor sum_dy = native::contiguous(native::to_dtype(native::narrow(sums, 0, 0, C), in.scalar_type()));
            Tensor sum_dy_xmu = native::contiguous(native::to_dtype(native::narrow(sums, 0, C, C), in.scalar_type()));
            grads[0] = native::batch_norm_backward_elemt(dy, in, mean, invstd, w, sum_dy, sum_dy_xmu, count);
          }
          // Weight and bias get this rank's own sums. With the all-reduced sums every rank's
          // input gradient is that of the total loss L = sum_r L_r, so every parameter
          // gradient a rank computes (here and upstream) is its share of dL/dp: summed over
          // the ranks they give the single-process gradient of L on the whole batch. DDP
          // all-reduces and averages every parameter gradient alike, giving dL/dp / world
          // size; all-reducing weight/bias here as well would count them world-size times.
          grads[1] = r.grad_weight;
          grads[2] = r.grad_bias;
          return grads;
        });
  }
  return out;
}

void convert_sync_batchnorm(nn::Module& module, ProcessGroupPtr group) {
  GR_CHECK(group != nullptr, "convert_sync_batchnorm: the process group is null");
  // One backend serves every layer: it holds only the group.
  auto backend = std::make_shared<SyncBatchNormBackend>(std::move(group));
  module.apply([&](nn::Module& m) {
    if (auto* bn = dynamic_cast<nn::BatchNorm2dImpl*>(&m)) bn->set_backend(backend);
  });
}

void convert_sync_batchnorm(nn::Module& module) { convert_sync_batchnorm(module, default_group()); }

nn::BatchNorm2d make_sync_batch_norm(const nn::BatchNorm2dOptions& options, ProcessGroupPtr group) {
  GR_CHECK(group != nullptr, "make_sync_batch_norm: the process group is null");
  nn::BatchNorm2d bn(options);
  bn->set_backend(std::make_shared<SyncBatchNormBackend>(std::move(group)));
  return bn;
}

}  // namespace gr::distributed
