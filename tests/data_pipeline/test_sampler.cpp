// Samplers: sequential order; random permutations per epoch, from a seed (given, or drawn
// from the default generator), replayable with set_epoch; AnySampler. See Note [Sampler epochs].
#include <algorithm>
#include <numeric>

#include "test_util.h"

using namespace gr;
namespace sp = gr::data::samplers;

namespace {

std::vector<size_t> drain(sp::Sampler<>& s, size_t batch_size, std::vector<size_t>* sizes = nullptr) {
  std::vector<size_t> out;
  while (auto b = s.next(batch_size)) {
    if (sizes) sizes->push_back(b->size());
    out.insert(out.end(), b->begin(), b->end());
  }
  return out;
}

std::vector<size_t> iota(size_t n) {
  std::vector<size_t> out(n);
  std::iota(out.begin(), out.end(), size_t{0});
  return out;
}

}  // namespace

TEST_CASE("SequentialSampler yields 0..n-1 in batches, every epoch") {
  sp::SequentialSampler seq(7);
  std::vector<size_t> sizes;
  CHECK(drain(seq, 3, &sizes) == iota(7));
  CHECK(sizes == std::vector<size_t>{3, 3, 1});
  CHECK(seq.index() == 7);
  CHECK(!seq.next(3));
  seq.set_epoch(5);  // the order does not depend on the epoch
  seq.reset(4);
  CHECK(drain(seq, 10) == iota(4));
  sp::SequentialSampler empty(0);
  CHECK(drain(empty, 2).empty());
  CHECK_THROWS_WITH_AS(seq.next(0), doctest::Contains("batch_size"), gr::Error);
}

TEST_CASE("RandomSampler: a permutation per epoch, a pure function of (seed, epoch)") {
  const size_t n = 1000;
  sp::RandomSampler a(n, uint64_t{42}), b(n, uint64_t{42}), other_seed(n, uint64_t{43});
  CHECK(a.seed() == 42);
  std::vector<size_t> epochs[3];
  for (size_t epoch = 0; epoch < 3; ++epoch) {
    CAPTURE(epoch);
    if (epoch > 0) a.reset();  // each reset() starts the next epoch
    CHECK(a.epoch() == epoch);
    epochs[epoch] = drain(a, 64);
    CHECK(epochs[epoch] != iota(n));
    std::vector<size_t> sorted = epochs[epoch];
    std::sort(sorted.begin(), sorted.end());
    CHECK(sorted == iota(n));  // a permutation
    b.set_epoch(epoch);
    b.reset();
    CHECK(drain(b, 7) == epochs[epoch]);  // another sampler, another batch size: the same order
    // gr::randperm from a generator seeded with epoch_seed(seed, epoch) = seed + epoch.
    Generator gen(sp::epoch_seed(42, static_cast<int64_t>(epoch)));
    Tensor perm = randperm(static_cast<int64_t>(n), &gen);
    const int64_t* p = perm.data_ptr<int64_t>();
    CHECK(epochs[epoch] == std::vector<size_t>(p, p + n));
  }
  CHECK(epochs[0] != epochs[1]);
  CHECK(epochs[1] != epochs[2]);
  const std::vector<size_t> other = drain(other_seed, 64);
  CHECK(other != epochs[0]);
  CHECK(other == epochs[1]);  // seed 43 epoch 0 is seed 42 epoch 1: torch's rule, seed + epoch
  a.set_epoch(1);  // replaying an epoch gives it back
  a.reset();
  CHECK(drain(a, 100) == epochs[1]);
  a.reset(5);
  CHECK(drain(a, 8).size() == 5);
  sp::RandomSampler none(0, uint64_t{1});
  CHECK(drain(none, 4).empty());
  CHECK_THROWS_WITH_AS(sp::RandomSampler(-1, uint64_t{1}), doctest::Contains("size must be >= 0"), gr::Error);
}

TEST_CASE("RandomSampler without a seed takes one from the default generator, as libtorch's follows manual_seed") {
  manual_seed(11);
  sp::RandomSampler a(50);
  std::vector<size_t> first = drain(a, 8);
  manual_seed(11);
  sp::RandomSampler b(50);
  CHECK(b.seed() == a.seed());
  CHECK(drain(b, 3) == first);  // the default generator decides the order, not the batch size
  std::vector<size_t> sorted = first;
  std::sort(sorted.begin(), sorted.end());
  CHECK(sorted == iota(50));
  CHECK(first != iota(50));
  CHECK(sp::RandomSampler(50).seed() != a.seed());  // the default generator moved on
  a.reset();
  CHECK(drain(a, 8) != first);  // a new epoch, a new permutation
  CHECK_THROWS_WITH_AS(sp::RandomSampler(3, kFloat32), doctest::Contains("index_dtype"), gr::Error);
  CHECK_THROWS_WITH_AS(a.next(0), doctest::Contains("batch_size"), gr::Error);
}

TEST_CASE("AnySampler forwards to the sampler it holds, set_epoch included") {
  sp::AnySampler<> any = sp::RandomSampler(30, uint64_t{3});
  sp::RandomSampler same(30, uint64_t{3});
  any.set_epoch(2);
  any.reset();
  same.set_epoch(2);
  same.reset();
  CHECK(drain(any, 4) == drain(same, 4));
  CHECK(dynamic_cast<sp::RandomSampler&>(any.get()).epoch() == 2);
  sp::AnySampler<> seq = sp::SequentialSampler(3);
  CHECK(drain(seq, 2) == iota(3));
}
