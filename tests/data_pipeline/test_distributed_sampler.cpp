// DistributedSampler against torch.utils.data.DistributedSampler and torch.randperm
// (tests/data/sampler_reference.json), the evaluation shards, and the argument errors.
#include <algorithm>
#include <numeric>
#include <set>

#include "data/distributed_sampler.h"
#include "reference_util.h"

using namespace gr;

namespace {
const nlohmann::json& reference() {
  static const nlohmann::json ref = test::load_reference("sampler_reference.json");
  return ref;
}
}  // namespace

TEST_CASE("torch_randperm is torch.randperm with a seeded CPU generator, bit for bit") {
  for (const auto& c : reference().at("randperm")) {
    const int64_t n = c.at("n");
    const uint64_t seed = c.at("seed");
    CAPTURE(n);
    CAPTURE(seed);
    CHECK(data::torch_randperm(n, seed) == c.at("perm").get<std::vector<int64_t>>());
  }
}

TEST_CASE("DistributedSampler yields what torch's DistributedSampler yields, rank by rank") {
  int checked = 0;
  for (const auto& c : reference().at("distributed_sampler")) {
    const int64_t n = c.at("n");
    const int replicas = c.at("replicas");
    for (int rank = 0; rank < replicas; ++rank) {
      CAPTURE(c.dump().substr(0, 120));
      CAPTURE(rank);
      data::DistributedSampler s(n, replicas, rank, c.at("shuffle"), c.at("seed"), c.at("drop_last"));
      const auto want = c.at("indices")[rank].get<std::vector<int64_t>>();
      CHECK(s.size() == static_cast<int64_t>(want.size()));
      CHECK(s.indices(c.at("epoch")) == want);
      ++checked;
    }
  }
  CHECK(checked > 300);
}

TEST_CASE("DistributedSampler: ranks cover the dataset, padding repeats the start, epochs differ") {
  const int64_t n = 10;
  std::multiset<int64_t> all;
  for (int r = 0; r < 4; ++r) {
    data::DistributedSampler s(n, 4, r, /*shuffle=*/true, /*seed=*/5);
    CHECK(s.size() == 3);  // ceil(10 / 4)
    auto idx = s.indices(0);
    all.insert(idx.begin(), idx.end());
    CHECK(idx == s.indices(0));     // pure function of the epoch
    CHECK(idx != s.indices(1));     // a new order every epoch
  }
  CHECK(all.size() == 12);  // 10 samples + 2 repeated to fill the last round
  for (int64_t i = 0; i < n; ++i) CHECK(all.count(i) >= 1);
  // drop_last: floor(10 / 4) each, no repeats.
  std::set<int64_t> dropped;
  for (int r = 0; r < 4; ++r) {
    auto idx = data::DistributedSampler(n, 4, r, true, 5, /*drop_last=*/true).indices(3);
    CHECK(idx.size() == 2);
    dropped.insert(idx.begin(), idx.end());
  }
  CHECK(dropped.size() == 8);
  CHECK(data::DistributedSampler(0, 2, 1).indices(0).empty());
  // torch's set_epoch spelling gives the same orders.
  data::DistributedSampler s(n, 4, 1, true, 5);
  CHECK(s.indices() == s.indices(0));
  s.set_epoch(3);
  CHECK(s.epoch() == 3);
  CHECK(s.indices() == s.indices(3));
  CHECK_THROWS_AS(s.set_epoch(-1), gr::Error);
}

TEST_CASE("shard_indices split 0..n-1 without padding; ShardSampler is the same every epoch") {
  std::vector<int64_t> seen;
  for (int r = 0; r < 3; ++r) {
    auto s = data::shard_indices(10, 3, r);
    CHECK(s.size() == (r == 0 ? 4u : 3u));
    seen.insert(seen.end(), s.begin(), s.end());
    CHECK(data::ShardSampler(10, 3, r).indices(7) == s);
  }
  std::sort(seen.begin(), seen.end());
  std::vector<int64_t> all(10);
  std::iota(all.begin(), all.end(), 0);
  CHECK(seen == all);
  CHECK(data::shard_indices(2, 4, 3).empty());
}

TEST_CASE("DistributedSampler and shards reject bad arguments, naming them") {
  CHECK_THROWS_WITH_AS(data::DistributedSampler(10, 2, 2), doctest::Contains("invalid rank 2"), gr::Error);
  CHECK_THROWS_WITH_AS(data::DistributedSampler(10, 0, 0), doctest::Contains("num_replicas must be >= 1"), gr::Error);
  CHECK_THROWS_WITH_AS(data::DistributedSampler(-1, 1, 0), doctest::Contains("dataset size"), gr::Error);
  CHECK_THROWS_WITH_AS(data::DistributedSampler(10, 2, 0).indices(-1), doctest::Contains("epoch"), gr::Error);
  CHECK_THROWS_WITH_AS(data::shard_indices(10, 2, -1), doctest::Contains("invalid rank -1"), gr::Error);
  CHECK_THROWS_WITH_AS(data::ShardSampler(10, 0, 0), doctest::Contains("ShardSampler"), gr::Error);
  CHECK_THROWS_AS(data::torch_randperm(-3, 0), gr::Error);
}
