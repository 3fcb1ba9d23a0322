// BatchNorm1d/2d/3d: normalise each channel of [N, C] or [N, C, L] / [N, C, H, W] /
// [N, C, D, H, W] with batch statistics in training (updating running_mean/running_var) and
// with the running statistics in eval. BatchNorm1d and BatchNorm3d are BatchNorm2d with
// another input rank (so SyncBatchNorm conversion reaches them too, as in PyTorch).
#pragma once

#include <optional>

#include "nn/module.h"
#include "nn/module_holder.h"
#include "nn/options.h"

namespace gr::nn {

struct BatchNorm2dOptions {
  BatchNorm2dOptions(int64_t num_features) : num_features_(num_features) {}
  GR_ARG(int64_t, num_features);
  GR_ARG(double, eps) = 1e-5;
  // Weight of the new batch statistic in the running average; nullopt = cumulative
  // average over all batches seen (1 / num_batches_tracked), as in torch.
  GR_ARG(std::optional<double>, momentum) = 0.1;
  GR_ARG(bool, affine) = true;
  GR_ARG(bool, track_running_stats) = true;
};

using BatchNormOptions = BatchNorm2dOptions;
using BatchNorm1dOptions = BatchNorm2dOptions;
using BatchNorm3dOptions = BatchNorm2dOptions;

class BatchNorm2dImpl;

// How a BatchNorm2d normalises in training mode when it is not the local computation:
// SyncBatchNorm (distributed/) installs one that combines statistics across processes.
// See Note [Converting to SyncBatchNorm].
class BatchNormBackend {
 public:
  virtual ~BatchNormBackend() = default;
  // Training-mode forward of `bn` on x [N, C, H, W] with the given momentum.
  virtual Tensor forward(BatchNorm2dImpl& bn, const Tensor& x, double momentum) = 0;
  // The module name printed instead of gr::nn::BatchNorm2d.
  virtual const char* name() const = 0;
};

// Note [Converting to SyncBatchNorm]
// PyTorch swaps every BatchNorm module for a SyncBatchNorm object. A C++ parent usually holds
// its layers as typed members, so swapping objects would leave the parent calling the old
// one; instead a BatchNorm2d keeps its object, weights and buffers, and gets a backend that
// computes the training-mode statistics across processes.
class BatchNorm2dImpl : public Module {
 public:
  explicit BatchNorm2dImpl(int64_t num_features) : BatchNorm2dImpl(BatchNorm2dOptions(num_features)) {}
  explicit BatchNorm2dImpl(const BatchNorm2dOptions& options);
  void reset_running_stats();
  void reset_parameters();
  Tensor forward(const Tensor& x);
  void pretty_print(std::ostream& out) const override;
  void set_backend(std::shared_ptr<BatchNormBackend> backend) { backend_ = std::move(backend); }
  const std::shared_ptr<BatchNormBackend>& backend() const { return backend_; }

  BatchNorm2dOptions options;
  Tensor weight, bias;                                       // affine only
  Tensor running_mean, running_var, num_batches_tracked;     // track_running_stats only

 protected:
  // BatchNorm1d/3d: another name and the input ranks accepted.
  BatchNorm2dImpl(const BatchNorm2dOptions& options, const char* name, int64_t min_dim, int64_t max_dim);

 private:
  std::shared_ptr<BatchNormBackend> backend_;  // null: local batch statistics
  int64_t min_dim_ = 4, max_dim_ = 4;
};
GR_MODULE(BatchNorm2d);

// Input [N, C] or [N, C, L].
class BatchNorm1dImpl : public BatchNorm2dImpl {
 public:
  explicit BatchNorm1dImpl(int64_t num_features) : BatchNorm1dImpl(BatchNorm1dOptions(num_features)) {}
  explicit BatchNorm1dImpl(const BatchNorm1dOptions& options) : BatchNorm2dImpl(options, "gr::nn::BatchNorm1d", 2, 3) {}
};
GR_MODULE(BatchNorm1d);

// Input [N, C, D, H, W].
class BatchNorm3dImpl : public BatchNorm2dImpl {
 public:
  explicit BatchNorm3dImpl(int64_t num_features) : BatchNorm3dImpl(BatchNorm3dOptions(num_features)) {}
  explicit BatchNorm3dImpl(const BatchNorm3dOptions& options) : BatchNorm2dImpl(options, "gr::nn::BatchNorm3d", 5, 5) {}
};
GR_MODULE(BatchNorm3d);

}  // namespace gr::nn
