// Sequential and random samplers. See Note [Sampler epochs].
#include "data/sampler.h"

#include <numeric>

#include "core/error.h"
#include "core/factory.h"

namespace gr::data {

uint64_t epoch_seed(uint64_t seed, int64_t epoch) { return seed + static_cast<uint64_t>(epoch); }

SequentialSampler::SequentialSampler(int64_t size) : size_(size) {
  GR_CHECK(size >= 0, "SequentialSampler: size must be >= 0, got ", size);
}

std::vector<int64_t> SequentialSampler::indices(int64_t) const {
  std::vector<int64_t> out(size_);
  std::iota(out.begin(), out.end(), int64_t{0});
  return out;
}

RandomSampler::RandomSampler(int64_t size, uint64_t seed) : size_(size), seed_(seed) {
  GR_CHECK(size >= 0, "RandomSampler: size must be >= 0, got ", size);
}

std::vector<int64_t> RandomSampler::indices(int64_t epoch) const {
  GR_CHECK(epoch >= 0, "RandomSampler: epoch must be >= 0, got ", epoch);
  Generator gen(epoch_seed(seed_, epoch));
  Tensor perm = randperm(size_, &gen);
  const int64_t* p = perm.data_ptr<int64_t>();
  return {p, p + size_};
}

}  // namespace gr::data
