// RandomSampler: a new permutation of [0, size) per epoch, as torch::data::samplers::RandomSampler,
// drawn from a seed so that every epoch can be replayed (Note [Sampler epochs]).
#pragma once

#include <cstdint>

#include "core/dtype.h"
#include "data/samplers/base.h"

namespace gr::data::samplers {

class RandomSampler : public Sampler<> {
 public:
  // As libtorch's: each reset() a new permutation; gradring draws the seed of the
  // permutations from the default generator here (seed it with gr::manual_seed).
  // index_dtype: the dtype of the permutation libtorch keeps; int64 is the only one accepted.
  explicit RandomSampler(int64_t size, ScalarType index_dtype = kInt64);
  // gradring: epoch e is gr::randperm(size) from a Generator seeded with epoch_seed(seed, e).
  RandomSampler(int64_t size, uint64_t seed);

  // Starts the next epoch (the first reset() after the constructor's: epoch 1), or the one
  // set_epoch chose.
  void reset(std::optional<size_t> new_size = std::nullopt) override;
  std::optional<std::vector<size_t>> next(size_t batch_size) override;
  void set_epoch(size_t epoch) override { next_epoch_ = epoch; }
  size_t epoch() const noexcept { return epoch_; }  // of the current permutation
  size_t index() const noexcept { return index_; }  // indices handed out this epoch
  uint64_t seed() const noexcept { return seed_; }

 private:
  uint64_t seed_;
  size_t epoch_ = 0, next_epoch_ = 0;
  std::vector<size_t> indices_;
  size_t index_ = 0;
};

}  // namespace gr::data::samplers
