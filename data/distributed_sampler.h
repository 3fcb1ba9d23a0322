// DistributedSampler: each rank's share of a dataset, index for index what PyTorch's
// torch.utils.data.DistributedSampler yields; ShardSampler: the unpadded split for evaluation.
#pragma once

#include <cstdint>
#include <vector>

#include "data/sampler.h"

namespace gr::data {

// Note [DistributedSampler order]
// Epoch e of rank r, as torch 1.13 computes it:
//   1. order = torch.randperm(n, generator seeded with seed + e) with shuffle, else 0..n-1;
//   2. without drop_last, repeat the order from its start until its length is a multiple of
//      num_replicas (every rank gets ceil(n / R) indices, some samples twice); with
//      drop_last, cut it to the largest multiple (every rank gets floor(n / R));
//   3. rank r takes order[r], order[r + R], order[r + 2R], ...
// The permutation is torch's CPU randperm (torch_randperm below), not gr::randperm, so a job
// moved between gradring and PyTorch visits the same samples in the same order. As every
// Sampler, the epoch is an argument, not state: there is no set_epoch to forget (see Note
// [Sampler epochs]); DataLoader::epoch(e) passes it.

// torch.randperm(n, generator=torch.Generator().manual_seed(seed)) on CPU, bit for bit:
// a Mersenne Twister (mt19937, seeded with the low 32 bits of `seed`) driving torch's
// Fisher-Yates variants (for n < 2^32 / 20 a forward swap with a 32-bit draw modulo n - i,
// beyond that the "inside-out" shuffle with 64-bit draws).
std::vector<int64_t> torch_randperm(int64_t n, uint64_t seed);

class DistributedSampler : public Sampler {
 public:
  DistributedSampler(int64_t dataset_size, int num_replicas, int rank, bool shuffle = true, uint64_t seed = 0,
                     bool drop_last = false);
  // Indices per epoch on this rank: ceil(n / R), or floor(n / R) with drop_last.
  int64_t size() const override { return num_samples_; }
  std::vector<int64_t> indices(int64_t epoch) const override;
  // torch's spelling: set_epoch(e), then indices() yields epoch e (a DataLoader passes the
  // epoch itself, see Note [Sampler epochs], so it needs neither).
  void set_epoch(int64_t epoch);
  std::vector<int64_t> indices() const { return indices(epoch_); }
  int64_t epoch() const { return epoch_; }

  int64_t dataset_size() const { return dataset_size_; }
  int num_replicas() const { return num_replicas_; }
  int rank() const { return rank_; }
  bool shuffle() const { return shuffle_; }
  uint64_t seed() const { return seed_; }
  bool drop_last() const { return drop_last_; }
  // Indices of all ranks together per epoch (num_replicas * size()).
  int64_t total_size() const { return num_samples_ * num_replicas_; }

 private:
  int64_t dataset_size_;
  int num_replicas_;
  int rank_;
  bool shuffle_;
  uint64_t seed_;
  bool drop_last_;
  int64_t num_samples_;
  int64_t epoch_ = 0;
};

// Rank `rank`'s share of 0..n-1 for evaluation: rank, rank + R, rank + 2R, ... < n. No
// padding and no shuffling, so the ranks' shares are disjoint and cover every sample
// exactly once (sizes differ by at most one). Evaluate with this, then sum the per-rank
// counts (e.g. all-reduce correct and total): DistributedSampler's padding repeats samples
// and skews metrics.
std::vector<int64_t> shard_indices(int64_t n, int num_replicas, int rank);

// shard_indices as a Sampler, for a DataLoader (the same indices in every epoch).
class ShardSampler : public Sampler {
 public:
  ShardSampler(int64_t dataset_size, int num_replicas, int rank);
  int64_t size() const override { return size_; }
  std::vector<int64_t> indices(int64_t epoch) const override;

 private:
  int64_t dataset_size_;
  int num_replicas_;
  int rank_;
  int64_t size_;
};

}  // namespace gr::data
