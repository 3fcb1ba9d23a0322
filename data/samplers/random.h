// RandomSampler: a new permutation of [0, size) per epoch from the default generator (seed it
// with gr::manual_seed), as torch::data::samplers::RandomSampler.
#pragma once

#include <cstdint>

#include "core/dtype.h"
#include "data/samplers/base.h"

namespace gr::data::samplers {

class RandomSampler : public Sampler<> {
 public:
  // index_dtype: the dtype of the permutation libtorch keeps; gradring's randperm makes int64,
  // the only one accepted.
  explicit RandomSampler(int64_t size, ScalarType index_dtype = kInt64);

  void reset(std::optional<size_t> new_size = std::nullopt) override;
  std::optional<std::vector<size_t>> next(size_t batch_size) override;
  size_t index() const noexcept { return index_; }  // indices handed out this epoch

 private:
  std::vector<size_t> indices_;
  size_t index_ = 0;
};

}  // namespace gr::data::samplers
