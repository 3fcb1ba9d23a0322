// DistributedSampler, torch-compatible randperm, and the unpadded evaluation shards.
// See Note [DistributedSampler order].
#include "data/distributed_sampler.h"

#include <limits>
#include <numeric>
#include <random>

#include "core/error.h"

namespace gr::data {

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

DistributedSampler::DistributedSampler(int64_t dataset_size, int num_replicas, int rank, bool shuffle, uint64_t seed,
                                       bool drop_last)
    : dataset_size_(dataset_size),
      num_replicas_(num_replicas),
      rank_(rank),
      shuffle_(shuffle),
      seed_(seed),
      drop_last_(drop_last) {
  GR_CHECK(dataset_size >= 0, "DistributedSampler: dataset size must be >= 0, got ", dataset_size);
  GR_CHECK(num_replicas >= 1, "DistributedSampler: num_replicas must be >= 1, got ", num_replicas);
  GR_CHECK(rank >= 0 && rank < num_replicas, "DistributedSampler: invalid rank ", rank,
           ", rank should be in the interval [0, ", num_replicas - 1, "]");
  num_samples_ = drop_last ? dataset_size / num_replicas : (dataset_size + num_replicas - 1) / num_replicas;
}

std::vector<int64_t> DistributedSampler::indices(int64_t epoch) const {
  GR_CHECK(epoch >= 0, "DistributedSampler: epoch must be >= 0, got ", epoch);
  std::vector<int64_t> order;
  if (shuffle_) {
    order = torch_randperm(dataset_size_, epoch_seed(seed_, epoch));
  } else {
    order.resize(static_cast<size_t>(dataset_size_));
    std::iota(order.begin(), order.end(), int64_t{0});
  }
  // Position p of the padded (or trimmed) order is order[p % n]: torch pads by repeating
  // the order from its start, as many times as needed.
  std::vector<int64_t> out(static_cast<size_t>(num_samples_));
  for (int64_t k = 0; k < num_samples_; ++k) out[k] = order[(rank_ + k * num_replicas_) % dataset_size_];
  return out;
}

void DistributedSampler::set_epoch(int64_t epoch) {
  GR_CHECK(epoch >= 0, "DistributedSampler::set_epoch: epoch must be >= 0, got ", epoch);
  epoch_ = epoch;
}

// How many of 0..n-1 rank `rank` gets in shard_indices (after checking the arguments).
static int64_t shard_size(int64_t n, int num_replicas, int rank, const char* who) {
  GR_CHECK(n >= 0, who, ": n must be >= 0, got ", n);
  GR_CHECK(num_replicas >= 1, who, ": num_replicas must be >= 1, got ", num_replicas);
  GR_CHECK(rank >= 0 && rank < num_replicas, who, ": invalid rank ", rank, ", rank should be in the interval [0, ",
           num_replicas - 1, "]");
  return rank < n ? (n - rank + num_replicas - 1) / num_replicas : 0;
}

std::vector<int64_t> shard_indices(int64_t n, int num_replicas, int rank) {
  std::vector<int64_t> out(static_cast<size_t>(shard_size(n, num_replicas, rank, "shard_indices")));
  for (size_t k = 0; k < out.size(); ++k) out[k] = rank + static_cast<int64_t>(k) * num_replicas;
  return out;
}

ShardSampler::ShardSampler(int64_t dataset_size, int num_replicas, int rank)
    : dataset_size_(dataset_size),
      num_replicas_(num_replicas),
      rank_(rank),
      size_(shard_size(dataset_size, num_replicas, rank, "ShardSampler")) {}

std::vector<int64_t> ShardSampler::indices(int64_t) const {
  return shard_indices(dataset_size_, num_replicas_, rank_);
}

}  // namespace gr::data
