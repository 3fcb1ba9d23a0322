// Samplers: sequential order, and random permutations that depend only on (seed, epoch).
#include <algorithm>
#include <numeric>

#include "data/sampler.h"
#include "test_util.h"

using namespace gr;

TEST_CASE("SequentialSampler yields 0..n-1 every epoch") {
  data::SequentialSampler s(5);
  CHECK(s.size() == 5);
  CHECK(s.indices(0) == std::vector<int64_t>{0, 1, 2, 3, 4});
  CHECK(s.indices(7) == s.indices(0));
  CHECK(data::SequentialSampler(0).indices(0).empty());
  CHECK_THROWS_AS(data::SequentialSampler(-1), gr::Error);
}

TEST_CASE("RandomSampler permutes, per (seed, epoch), reproducibly") {
  const int64_t n = 1000;
  data::RandomSampler a(n, 42), b(n, 42), other_seed(n, 43);
  std::vector<int64_t> identity(n);
  std::iota(identity.begin(), identity.end(), int64_t{0});
  for (int64_t epoch = 0; epoch < 3; ++epoch) {
    std::vector<int64_t> order = a.indices(epoch);
    CHECK(order != identity);
    CHECK(order == b.indices(epoch));  // another sampler object, same settings
    CHECK(order == a.indices(epoch));  // asking again
    std::sort(order.begin(), order.end());
    CHECK(order == identity);  // a permutation
  }
  CHECK(a.indices(0) != a.indices(1));
  CHECK(a.indices(1) != a.indices(2));
  CHECK(a.indices(0) != other_seed.indices(0));
  // torch's DistributedSampler rule: the generator is seeded with seed + epoch.
  CHECK(a.indices(1) == other_seed.indices(0));
  Generator g(data::epoch_seed(42, 2));
  Tensor expected = randperm(n, &g);
  CHECK(tensor(a.indices(2)).equal(expected));
  CHECK(data::RandomSampler(0, 1).indices(0).empty());
  CHECK_THROWS_AS(a.indices(-1), gr::Error);
}
