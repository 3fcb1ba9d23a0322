// Samplers: which dataset indices a DataLoader visits in an epoch, and in what order.
#pragma once

#include <cstdint>
#include <vector>

namespace gr::data {

// Note [Sampler epochs]
// An epoch's indices are a pure function of the sampler's settings and the epoch number,
// so any epoch can be replayed (resume from a snapshot) and every thread or rank computes
// the same order without talking to the others. There is no set_epoch: the epoch is an
// argument (see DataLoader::epoch), so "forgot to call set_epoch, every epoch has the same
// order" cannot happen. A DistributedSampler fits as one more subclass: shuffle with
// epoch_seed(seed, epoch), pad or trim to a multiple of the world size, take every
// world_size-th index starting at its rank.
class Sampler {
 public:
  virtual ~Sampler() = default;
  // Number of indices in every epoch.
  virtual int64_t size() const = 0;
  virtual std::vector<int64_t> indices(int64_t epoch) const = 0;
};

// 0, 1, ..., size - 1 in every epoch.
class SequentialSampler : public Sampler {
 public:
  explicit SequentialSampler(int64_t size);
  int64_t size() const override { return size_; }
  std::vector<int64_t> indices(int64_t epoch) const override;

 private:
  int64_t size_;
};

// A permutation of [0, size) per epoch: gr::randperm from a Generator seeded with
// epoch_seed(seed, epoch). The same (seed, epoch) always gives the same permutation.
class RandomSampler : public Sampler {
 public:
  explicit RandomSampler(int64_t size, uint64_t seed = 0);
  int64_t size() const override { return size_; }
  std::vector<int64_t> indices(int64_t epoch) const override;
  uint64_t seed() const { return seed_; }

 private:
  int64_t size_;
  uint64_t seed_;
};

// The generator seed for shuffling epoch `epoch`: seed + epoch, as torch's DistributedSampler.
uint64_t epoch_seed(uint64_t seed, int64_t epoch);

}  // namespace gr::data
