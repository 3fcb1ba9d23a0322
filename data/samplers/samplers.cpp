// torch::data's samplers: sequential, random (default generator) and the two distributed
// ones. See Note [libtorch distributed samplers].
#include <algorithm>
#include <numeric>
#include <random>

#include "core/error.h"
#include "core/factory.h"
#include "data/samplers/distributed.h"
#include "data/samplers/random.h"
#include "data/samplers/sequential.h"

namespace gr::data::samplers {

namespace {

// Indices [begin, min(begin + batch_size, end)) of `all`, or nothing at the end.
std::optional<std::vector<size_t>> take(const std::vector<size_t>& all, size_t& begin, size_t end, size_t batch_size,
                                        const char* who) {
  GR_CHECK(batch_size > 0, who, ": batch_size must be > 0");
  if (begin >= end) return std::nullopt;
  const size_t stop = std::min(end, begin + batch_size);
  std::vector<size_t> out(all.begin() + static_cast<std::ptrdiff_t>(begin), all.begin() + static_cast<std::ptrdiff_t>(stop));
  begin = stop;
  return out;
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
  indices_.resize(static_cast<size_t>(size));
  reset();
}

void RandomSampler::reset(std::optional<size_t> new_size) {
  const auto n = static_cast<int64_t>(new_size.value_or(indices_.size()));
  Tensor perm = randperm(n);
  const int64_t* p = perm.data_ptr<int64_t>();
  indices_.assign(p, p + n);
  index_ = 0;
}

std::optional<std::vector<size_t>> RandomSampler::next(size_t batch_size) {
  return take(indices_, index_, indices_.size(), batch_size, "RandomSampler");
}

DistributedRandomSampler::DistributedRandomSampler(size_t size, size_t num_replicas, size_t rank,
                                                   bool allow_duplicates)
    : DistributedSampler(size, num_replicas, rank, allow_duplicates) {
  reset(size_);
}

void DistributedRandomSampler::populate_indices() {
  const size_t count = local_sample_count();
  const size_t total = num_replicas_ == 1 ? size_ : count * num_replicas_;
  all_indices_.resize(total);
  std::iota(all_indices_.begin(), all_indices_.end(), size_t{0});
  for (size_t i = size_; i < total; ++i) all_indices_[i] = i - size_;  // repeats to fill the last slice
  begin_index_ = rank_ * count;
  end_index_ = begin_index_ + count;
  sample_index_ = begin_index_;
}

void DistributedRandomSampler::reset(std::optional<size_t> new_size) {
  size_ = new_size.value_or(size_);
  populate_indices();
  std::mt19937 rand(static_cast<std::mt19937::result_type>(epoch_));
  std::shuffle(all_indices_.begin(), all_indices_.end(), rand);
  sample_index_ = begin_index_;
}

std::optional<std::vector<size_t>> DistributedRandomSampler::next(size_t batch_size) {
  return take(all_indices_, sample_index_, end_index_, batch_size, "DistributedRandomSampler");
}

DistributedSequentialSampler::DistributedSequentialSampler(size_t size, size_t num_replicas, size_t rank,
                                                           bool allow_duplicates)
    : DistributedSampler(size, num_replicas, rank, allow_duplicates) {
  populate_indices();
}

void DistributedSequentialSampler::populate_indices() {
  begin_index_ = rank_ * local_sample_count();
  end_index_ = begin_index_ + local_sample_count();
  sample_index_ = begin_index_;
}

void DistributedSequentialSampler::reset(std::optional<size_t> new_size) {
  if (new_size && *new_size != size_) {
    size_ = *new_size;
    populate_indices();
  } else {
    sample_index_ = begin_index_;
  }
}

std::optional<std::vector<size_t>> DistributedSequentialSampler::next(size_t batch_size) {
  GR_CHECK(batch_size > 0, "DistributedSequentialSampler: batch_size must be > 0");
  if (sample_index_ >= end_index_) return std::nullopt;
  const size_t stop = std::min(end_index_, sample_index_ + batch_size);
  std::vector<size_t> batch(stop - sample_index_);
  std::iota(batch.begin(), batch.end(), sample_index_);
  for (size_t& index : batch) index %= size_;  // positions past the end repeat the first indices
  sample_index_ = stop;
  return batch;
}

}  // namespace gr::data::samplers
