// SyncBatchNorm: batch normalisation whose training-mode statistics are those of the whole
// batch across the ranks of a process group (each rank holds a slice of it). Installed as
// the backend of existing BatchNorm2d modules, see Note [Converting to SyncBatchNorm].
#pragma once

#include "distributed/backends/process_group.h"
#include "nn/modules/batchnorm.h"

namespace gr::distributed {

// Note [SyncBatchNorm exchanges]
// Forward (training, group size > 1): each rank computes its per-channel mean and invstd
// and its count N*H*W, all-gathers the packed [mean, invstd, count] (2C+1 values) and
// combines them weighted by count (ranks with count 0 contribute nothing), so every rank
// normalises with the global mean/invstd and updates its running stats identically.
// Backward: each rank's per-channel sum(dy) and sum(dy * (x - mean)) are all-reduced (2C
// values, only when the input needs a gradient), and the input gradient uses the global
// count. Weight/bias gradients stay local sums; DDP's average makes them right (see the
// comment in the backward). Both collectives block (Work::wait with the group's timeout),
// and every rank must run them, including a rank whose batch is empty.
class SyncBatchNormBackend : public nn::BatchNormBackend {
 public:
  explicit SyncBatchNormBackend(ProcessGroupPtr group);
  // With a group of one rank this is exactly the local batch_norm.
  Tensor forward(nn::BatchNorm2dImpl& bn, const Tensor& x, double momentum) override;
  const char* name() const override { return "gr::nn::SyncBatchNorm"; }
  const ProcessGroupPtr& group() const { return group_; }

 private:
  ProcessGroupPtr group_;
};

// Makes every BatchNorm2d in the module tree (the module itself included) synchronise over
// `group`, in place: the modules, their weights and running buffers stay what they are.
void convert_sync_batchnorm(nn::Module& module, ProcessGroupPtr group);
// The same over the default group (init_process_group).
void convert_sync_batchnorm(nn::Module& module);

// A new BatchNorm2d that synchronises over `group`.
nn::BatchNorm2d make_sync_batch_norm(const nn::BatchNorm2dOptions& options, ProcessGroupPtr group);

}  // namespace gr::distributed
