// The distributed samplers: each of num_replicas ranks visits its share of the dataset,
// index for index what torch.utils.data.DistributedSampler yields, shuffled per epoch
// (DistributedRandomSampler) or in order (DistributedSequentialSampler); and ShardSampler,
// the unpadded split for evaluation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "data/samplers/base.h"

namespace gr::data::samplers {

// Note [DistributedSampler order]
// Epoch e of rank r, as torch.utils.data.DistributedSampler (torch 1.13) computes it:
//   1. order = torch.randperm(n, generator seeded with seed + e) when shuffling, else 0..n-1;
//   2. with allow_duplicates (torch: not drop_last), repeat the order from its start until
//      its length is a multiple of num_replicas R (every rank gets ceil(n / R) indices, some
//      samples twice); without, cut it to the largest multiple (every rank gets floor(n / R));
//   3. rank r takes order[r], order[r + R], order[r + 2R], ...
// The permutation is torch's CPU randperm (torch_randperm), so a job moved between gradring
// and PyTorch visits the same samples in the same order. libtorch's own distributed samplers
// give each rank a contiguous slice of a std::shuffle instead (docs/porting-from-libtorch.md).
// set_epoch(e) then reset() starts epoch e; a loader does both (Note [Sampler epochs]).

namespace detail {
// Throws unless num_replicas >= 1 and rank < num_replicas; `who` names the sampler.
void check_replicas(size_t num_replicas, size_t rank, const char* who);
}  // namespace detail

// What the two distributed samplers share (libtorch's base class, plus the seed).
template <typename BatchRequest = std::vector<size_t>>
class DistributedSampler : public Sampler<BatchRequest> {
 public:
  DistributedSampler(size_t size, size_t num_replicas = 1, size_t rank = 0, bool allow_duplicates = true,
                     uint64_t seed = 0)
      : size_(size), num_replicas_(num_replicas), rank_(rank), allow_duplicates_(allow_duplicates), seed_(seed) {
    detail::check_replicas(num_replicas, rank, "DistributedSampler");
  }

  // The epoch the next reset() shuffles for.
  void set_epoch(size_t epoch) override { epoch_ = epoch; }
  size_t epoch() const { return epoch_; }
  uint64_t seed() const { return seed_; }
  // Indices of this rank per epoch: ceil(size / R) with allow_duplicates, else floor(size / R).
  size_t local_sample_count() const {
    return allow_duplicates_ ? (size_ + num_replicas_ - 1) / num_replicas_ : size_ / num_replicas_;
  }

 protected:
  size_t size_;
  size_t num_replicas_;
  size_t rank_;
  size_t epoch_ = 0;
  bool allow_duplicates_;
  uint64_t seed_;
};

class DistributedRandomSampler : public DistributedSampler<> {
 public:
  DistributedRandomSampler(size_t size, size_t num_replicas = 1, size_t rank = 0, bool allow_duplicates = true,
                           uint64_t seed = 0);

  void reset(std::optional<size_t> new_size = std::nullopt) override;
  std::optional<std::vector<size_t>> next(size_t batch_size) override;
  size_t index() const noexcept { return index_; }  // indices handed out this epoch

 private:
  std::vector<size_t> indices_;  // this rank's, in this epoch
  size_t index_ = 0;
};

class DistributedSequentialSampler : public DistributedSampler<> {
 public:
  DistributedSequentialSampler(size_t size, size_t num_replicas = 1, size_t rank = 0, bool allow_duplicates = true);

  void reset(std::optional<size_t> new_size = std::nullopt) override;
  std::optional<std::vector<size_t>> next(size_t batch_size) override;
  size_t index() const noexcept { return index_; }

 private:
  std::vector<size_t> indices_;
  size_t index_ = 0;
};

// Rank `rank`'s share of 0..size-1 for evaluation (gradring): rank, rank + R, rank + 2R, ...
// < size. No padding and no shuffling, so the ranks' shares are disjoint and cover every
// sample exactly once (their sizes differ by at most one). Evaluate with this, then sum the
// per-rank counts (all-reduce correct and total): DistributedSampler's padding repeats
// samples and skews metrics.
class ShardSampler : public Sampler<> {
 public:
  ShardSampler(size_t size, size_t num_replicas, size_t rank);

  void reset(std::optional<size_t> new_size = std::nullopt) override;
  std::optional<std::vector<size_t>> next(size_t batch_size) override;
  size_t index() const noexcept { return index_; }

 private:
  size_t size_, num_replicas_, rank_;
  std::vector<size_t> indices_;
  size_t index_ = 0;
};

}  // namespace gr::data::samplers
