// DataLoaderOptions: torch::data::DataLoaderOptions (batch_size, workers, max_jobs, timeout,
// enforce_ordering, drop_last) plus what gradring's DataLoader adds (shuffle, seed, sampler,
// transform, pin_memory), set with chained calls: DataLoaderOptions().batch_size(64).workers(2).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

#include "core/arg.h"

namespace gr::data {

class Sampler;
class Transform;

struct DataLoaderOptions {
  DataLoaderOptions() = default;
  /* implicit */ DataLoaderOptions(size_t batch_size) : batch_size_(batch_size) {}

  GR_ARG(size_t, batch_size) = 1;
  // Background threads that make batches; 0: batches are made by the consumer.
  GR_ARG(size_t, workers) = 0;
  // Batches prepared ahead of the consumer, at most; default 2 * workers.
  GR_ARG(std::optional<size_t>, max_jobs);
  // Longest wait for one batch; none: no limit.
  GR_ARG(std::optional<std::chrono::milliseconds>, timeout);
  // Batches always arrive in order (see Note [Batch determinism]); false is accepted, as
  // any order is then allowed.
  GR_ARG(bool, enforce_ordering) = true;
  // Drop a last batch smaller than batch_size.
  GR_ARG(bool, drop_last) = false;

  // gradring's DataLoader (data/dataloader.h) only; make_data_loader takes its sampler apart.
  // shuffle: visit the examples through RandomSampler(dataset size, seed); excludes sampler.
  GR_ARG(bool, shuffle) = false;
  // For shuffling and for random transforms.
  GR_ARG(uint64_t, seed) = 0;
  // Default: sequential.
  GR_ARG(std::shared_ptr<const Sampler>, sampler);
  // Applied to each batch's data [B, C, H, W].
  GR_ARG(std::shared_ptr<const Transform>, transform);
  // Make batches in page-locked memory (gr::pin_memory), so that batch.to(cuda, true) (with
  // non_blocking) is an asynchronous copy (Note [Pinned copies] in cuda_kernels/pinned.h).
  // Without a CUDA device the loader prints one notice and makes ordinary batches.
  GR_ARG(bool, pin_memory) = false;

 public:
  // Batches prepared ahead: max_jobs, or 2 * workers.
  size_t capacity() const { return max_jobs_.value_or(2 * workers_); }
};

}  // namespace gr::data
