// torch::data's distributed samplers: each of num_replicas ranks visits its own slice of the
// dataset, shuffled per epoch (DistributedRandomSampler) or in order (DistributedSequentialSampler).
#pragma once

#include <cstddef>
#include <vector>

#include "core/error.h"

#include "data/samplers/base.h"

namespace gr::data::samplers {

// Note [libtorch distributed samplers]
// As libtorch computes them (so a port visits the same samples): every rank gets
// local_sample_count() = ceil(size / R) indices with allow_duplicates (the first indices
// repeat to fill the last slice), else floor(size / R). Rank r takes positions
// [r * count, (r + 1) * count) of: 0..total-1 (sequential) or of that list shuffled by
// std::shuffle with std::mt19937(epoch) (random; set_epoch before reset). Unlike
// torch.utils.data's DistributedSampler (gr::data::DistributedSampler), a rank's slice is
// contiguous, not strided.
template <typename BatchRequest = std::vector<size_t>>
class DistributedSampler : public Sampler<BatchRequest> {
 public:
  DistributedSampler(size_t size, size_t num_replicas = 1, size_t rank = 0, bool allow_duplicates = true)
      : size_(size), num_replicas_(num_replicas), rank_(rank), allow_duplicates_(allow_duplicates) {
    GR_CHECK(num_replicas >= 1, "DistributedSampler: num_replicas must be >= 1, got ", num_replicas);
    GR_CHECK(rank < num_replicas, "DistributedSampler: rank ", rank, " out of range for ", num_replicas,
             " replicas");
  }

  // The epoch the next reset() shuffles for.
  void set_epoch(size_t epoch) { epoch_ = epoch; }
  size_t epoch() const { return epoch_; }
  // Indices handed out this epoch.
  size_t index() const noexcept { return sample_index_ - begin_index_; }

 protected:
  size_t local_sample_count() const {
    return allow_duplicates_ ? (size_ + num_replicas_ - 1) / num_replicas_ : size_ / num_replicas_;
  }

  size_t size_;
  size_t num_replicas_;
  size_t rank_;
  size_t epoch_ = 0;
  bool allow_duplicates_;
  // This rank's positions [begin_index_, end_index_); the next one to hand out.
  size_t begin_index_ = 0, end_index_ = 0, sample_index_ = 0;
};

class DistributedRandomSampler : public DistributedSampler<> {
 public:
  DistributedRandomSampler(size_t size, size_t num_replicas = 1, size_t rank = 0, bool allow_duplicates = true);

  void reset(std::optional<size_t> new_size = std::nullopt) override;
  std::optional<std::vector<size_t>> next(size_t batch_size) override;

 private:
  void populate_indices();
  std::vector<size_t> all_indices_;
};

class DistributedSequentialSampler : public DistributedSampler<> {
 public:
  DistributedSequentialSampler(size_t size, size_t num_replicas = 1, size_t rank = 0, bool allow_duplicates = true);

  void reset(std::optional<size_t> new_size = std::nullopt) override;
  std::optional<std::vector<size_t>> next(size_t batch_size) override;

 private:
  void populate_indices();
};

}  // namespace gr::data::samplers
