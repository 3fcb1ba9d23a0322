// DataLoaderOptions: torch::data::DataLoaderOptions (batch_size, workers, max_jobs, timeout,
// enforce_ordering, drop_last) plus gradring's seed and pin_memory, set with chained calls:
// DataLoaderOptions().batch_size(64).workers(2).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "core/arg.h"

namespace gr::data {

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

  // gradring: the seed of each batch's generator, which random transforms draw from
  // (batch_generator(), Note [Batch determinism]). Shuffling is the sampler's (its own seed).
  GR_ARG(uint64_t, seed) = 0;
  // gradring: make batches in page-locked memory (gr::pin_memory), so that
  // batch.to(cuda, true) (non_blocking) is an asynchronous copy (Note [Pinned copies] in
  // cuda_kernels/pinned.h). Without a CUDA device the loader prints one notice and makes
  // ordinary batches.
  GR_ARG(bool, pin_memory) = false;

 public:
  // Batches prepared ahead: max_jobs, or 2 * workers.
  size_t capacity() const { return max_jobs_.value_or(2 * workers_); }
};

}  // namespace gr::data
