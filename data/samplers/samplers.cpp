// The sequential and random samplers, and the batch slicing every sampler shares.
// See Note [Sampler epochs].
#include <algorithm>
#include <numeric>

#include "core/error.h"
#include "core/factory.h"
#include "core/philox.h"
#include "data/samplers/random.h"
#include "data/samplers/randperm.h"
#include "data/samplers/sequential.h"

namespace gr::data::samplers {

namespace detail {

std::optional<std::vector<size_t>> take(const std::vector<size_t>& all, size_t& index, size_t end, size_t batch_size,
                                        const char* who) {
  GR_CHECK(batch_size > 0, who, ": batch_size must be > 0");
  if (index >= end) return std::nullopt;
  const size_t stop = std::min(end, index + batch_size);
  std::vector<size_t> out(all.begin() + static_cast<std::ptrdiff_t>(index), all.begin() + static_cast<std::ptrdiff_t>(stop));
  index = stop;
  return out;
}

}  // namespace detail

namespace {

// 64 random bits from the default generator (one Philox block of its stream).
uint64_t draw_seed() {
  Generator& gen = default_generator();
  const uint64_t seed = gen.seed(), offset = gen.reserve(1);
  uint32_t r[4];
  Philox4x32(seed, 0, offset).next(r);
  return (static_cast<uint64_t>(r[0]) << 32) | r[1];
}

}  // namespace

void SequentialSampler::reset(std::optional<size_t> new_size) {
  if (new_size) size_ = *new_size;
  index_ = 0;
}

std::optional<std::vector<size_t>> SequentialSampler::next(size_t batch_size) {
  GR_CHECK(batch_size > 0, "SequentialSampler: batch_size must be > 0");
  if (index_ >= size_) return std::nullopt;
  std::vector<size_t> batch(std::min(batch_size, size_ - index_));
  std::iota(batch.begin(), batch.end(), index_);
  index_ += batch.size();
  return batch;
}

RandomSampler::RandomSampler(int64_t size, ScalarType index_dtype) {
  GR_CHECK(size >= 0, "RandomSampler: size must be >= 0, got ", size);
  GR_CHECK(index_dtype == kInt64, "RandomSampler: index_dtype must be int64 (gradring's randperm makes int64), got ",
           index_dtype);
  seed_ = draw_seed();
  indices_.resize(static_cast<size_t>(size));
  reset();
}

RandomSampler::RandomSampler(int64_t size, uint64_t seed) : seed_(seed) {
  GR_CHECK(size >= 0, "RandomSampler: size must be >= 0, got ", size);
  indices_.resize(static_cast<size_t>(size));
  reset();
}

void RandomSampler::reset(std::optional<size_t> new_size) {
  const auto n = static_cast<int64_t>(new_size.value_or(indices_.size()));
  epoch_ = next_epoch_++;
  Generator gen(epoch_seed(seed_, static_cast<int64_t>(epoch_)));
  Tensor perm = randperm(n, &gen);
  const int64_t* p = perm.data_ptr<int64_t>();
  indices_.assign(p, p + n);
  index_ = 0;
}

std::optional<std::vector<size_t>> RandomSampler::next(size_t batch_size) {
  return detail::take(indices_, index_, indices_.size(), batch_size, "RandomSampler");
}

}  // namespace gr::data::samplers
