// Pieces of train_gpt's run (apps/train_gpt.cpp): the stream of micro-batches it resumes
// anywhere in, and the two ways it shards state over the ranks (ZeRO-1's optimizer, fully_shard
// units).
#pragma once

#include <gradring/gradring.h>

#include <memory>
#include <optional>
#include <vector>

#include "gpt.h"
#include "job.h"
#include "distributed/ddp/zero_redundancy_optimizer.h"
#include "distributed/fsdp/fully_shard.h"

namespace gr::apps {

// The training micro-batches in run order, [B, L] each, from a loader of B windows per batch
// (drop_last, E batches per epoch): micro-batch k is batch k mod E of epoch k / E, so the
// stream can start at any k (Note [GPT resume]) and only the first batch after a start or an
// epoch's end waits for a new epoch.
template <class Loader>
class MicroBatches {
 public:
  MicroBatches(Loader& loader, int64_t per_epoch) : loader_(loader), per_epoch_(per_epoch) {}
  data::Example<> operator()(int64_t k) {
    const int64_t epoch = k / per_epoch_, index = k % per_epoch_;
    if (epoch_ && epoch_->epoch() == epoch && it_->index() + 1 == index) {
      ++*it_;
    } else {
      epoch_.emplace(loader_.epoch(epoch, index));
      it_.emplace(epoch_->begin());
    }
    return std::move(**it_);
  }

 private:
  Loader& loader_;
  int64_t per_epoch_;
  std::optional<typename Loader::Epoch> epoch_;
  std::optional<typename Loader::Iterator> it_;
};

// --zero 1: the AdamW (its parameter groups and options) becomes a ZeroRedundancyOptimizer
// over the job's ranks, each keeping the state of its own partition.
inline distributed::ZeroRedundancyOptimizer* shard_optimizer(std::unique_ptr<optim::Optimizer>& optimizer, const Job& job) {
  GR_CHECK(job.distributed(), "--zero 1 shards the optimizer state over the ranks: start train_gpt under gradring-run "
                              "or mpirun");
  std::vector<optim::OptimizerParamGroup> groups;
  for (auto& group : optimizer->param_groups()) groups.emplace_back(group.params(), group.options().clone());
  const auto& adamw = static_cast<const optim::AdamWOptions&>(optimizer->defaults());
  auto zero = std::make_unique<distributed::ZeroRedundancyOptimizer>(
      std::move(groups), distributed::optimizer_class<optim::AdamW>(adamw), job.group);
  auto* raw = zero.get();
  optimizer = std::move(zero);
  return raw;
}

// Every rank resumes from its own snapshot: they must all be of the same step.
inline void check_same_step(const Job& job, int64_t step) {
  const std::vector<double> lo = apps::reduce(job, {static_cast<double>(step)}, distributed::ReduceOp::Min);
  const std::vector<double> hi = apps::reduce(job, {static_cast<double>(step)}, distributed::ReduceOp::Max);
  GR_CHECK(lo[0] == hi[0], "--zero 1: the ranks' snapshots are of different steps (", lo[0], " to ", hi[0],
           "); every rank must resume from its own snapshot of the same step");
}

// --fsdp: every transformer block a fully_shard unit, then the model (the embeddings and the
// final LayerNorm: the root unit).
inline distributed::fsdp::FSDPModule shard_model(apps::GPT& model, const Job& job) {
  GR_CHECK(job.distributed(), "--fsdp shards the model over the ranks: start train_gpt under gradring-run or mpirun "
                              "(--nproc-per-node 1 works too)");
  const auto options = distributed::fsdp::FullyShardOptions().group(job.group);
  for (const auto& block : model->blocks->children()) distributed::fsdp::fully_shard(block, options);
  return distributed::fsdp::fully_shard(model, options);
}

}  // namespace gr::apps
