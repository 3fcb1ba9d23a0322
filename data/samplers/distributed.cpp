// torch's CPU randperm, the distributed samplers and the evaluation shards.
// See Note [DistributedSampler order].
#include "data/samplers/distributed.h"

#include <limits>
#include <numeric>
#include <random>

#include "core/error.h"
#include "data/samplers/randperm.h"

namespace gr::data::samplers {

uint64_t epoch_seed(uint64_t seed, int64_t epoch) { return seed + static_cast<uint64_t>(epoch); }

std::vector<int64_t> torch_randperm(int64_t n, uint64_t seed) {
  GR_CHECK(n >= 0, "torch_randperm: n must be >= 0, got ", n);
  // torch's mt19937 keeps only the low 32 bits of the seed; std::mt19937 is the same engine
  // with the same initialisation.
  std::mt19937 engine(static_cast<uint32_t>(seed & 0xffffffffu));
  std::vector<int64_t> out(static_cast<size_t>(n));
  if (n < static_cast<int64_t>(std::numeric_limits<uint32_t>::max() / 20)) {
    // aten randperm_cpu: swap i with i + (random() % (n - i)); no draw for the last element.
    std::iota(out.begin(), out.end(), int64_t{0});
    for (int64_t i = 0; i + 1 < n; ++i) {
      int64_t z = static_cast<int64_t>(engine() % static_cast<uint64_t>(n - i));
      std::swap(out[i], out[i + z]);
    }
    return out;
  }
  // Large n: the "inside-out" shuffle with random64() = (first draw << 32) | second draw,
  // as the modulo of a 32-bit draw would be visibly biased.
  for (int64_t i = 0; i < n; ++i) {
    uint64_t hi = engine();
    uint64_t lo = engine();
    int64_t z = static_cast<int64_t>(((hi << 32) | lo) % static_cast<uint64_t>(i + 1));
    out[i] = out[z];
    out[z] = i;
  }
  return out;
}

namespace {

// This rank's indices of one epoch (steps 1 to 3 of the Note).
std::vector<size_t> distributed_indices(size_t n, size_t replicas, size_t rank, size_t count, bool shuffle,
                                        uint64_t seed, size_t epoch) {
  std::vector<size_t> order(n);
  if (shuffle) {
    const std::vector<int64_t> perm = torch_randperm(static_cast<int64_t>(n), epoch_seed(seed, static_cast<int64_t>(epoch)));
    for (size_t i = 0; i < n; ++i) order[i] = static_cast<size_t>(perm[i]);
  } else {
    std::iota(order.begin(), order.end(), size_t{0});
  }
  // Position p of the padded (or trimmed) order is order[p % n]: torch pads by repeating
  // the order from its start, as many times as needed.
  std::vector<size_t> out(count);
  for (size_t k = 0; k < count; ++k) out[k] = order[(rank + k * replicas) % n];
  return out;
}

}  // namespace

namespace detail {

void check_replicas(size_t num_replicas, size_t rank, const char* who) {
  GR_CHECK(num_replicas >= 1, who, ": num_replicas must be >= 1, got ", num_replicas);
  GR_CHECK(rank < num_replicas, who, ": invalid rank ", rank, ", rank should be in the interval [0, ",
           num_replicas - 1, "]");
}

}  // namespace detail

DistributedRandomSampler::DistributedRandomSampler(size_t size, size_t num_replicas, size_t rank,
                                                   bool allow_duplicates, uint64_t seed)
    : DistributedSampler(size, num_replicas, rank, allow_duplicates, seed) {
  reset();
}

void DistributedRandomSampler::reset(std::optional<size_t> new_size) {
  size_ = new_size.value_or(size_);
  indices_ = distributed_indices(size_, num_replicas_, rank_, local_sample_count(), /*shuffle=*/true, seed_, epoch_);
  index_ = 0;
}

std::optional<std::vector<size_t>> DistributedRandomSampler::next(size_t batch_size) {
  return detail::take(indices_, index_, indices_.size(), batch_size, "DistributedRandomSampler");
}

DistributedSequentialSampler::DistributedSequentialSampler(size_t size, size_t num_replicas, size_t rank,
                                                           bool allow_duplicates)
    : DistributedSampler(size, num_replicas, rank, allow_duplicates) {
  reset();
}

void DistributedSequentialSampler::reset(std::optional<size_t> new_size) {
  size_ = new_size.value_or(size_);
  indices_ = distributed_indices(size_, num_replicas_, rank_, local_sample_count(), /*shuffle=*/false, 0, 0);
  index_ = 0;
}

std::optional<std::vector<size_t>> DistributedSequentialSampler::next(size_t batch_size) {
  return detail::take(indices_, index_, indices_.size(), batch_size, "DistributedSequentialSampler");
}

ShardSampler::ShardSampler(size_t size, size_t num_replicas, size_t rank)
    : size_(size), num_replicas_(num_replicas), rank_(rank) {
  detail::check_replicas(num_replicas, rank, "ShardSampler");
  reset();
}

void ShardSampler::reset(std::optional<size_t> new_size) {
  size_ = new_size.value_or(size_);
  indices_.clear();
  for (size_t i = rank_; i < size_; i += num_replicas_) indices_.push_back(i);
  index_ = 0;
}

std::optional<std::vector<size_t>> ShardSampler::next(size_t batch_size) {
  return detail::take(indices_, index_, indices_.size(), batch_size, "ShardSampler");
}

}  // namespace gr::data::samplers
