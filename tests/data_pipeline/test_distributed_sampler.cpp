// The distributed samplers against torch.utils.data.DistributedSampler and torch.randperm
// (tests/data/sampler_reference.json), the evaluation shards, and the argument errors.
#include <algorithm>
#include <numeric>
#include <set>

#include "reference_util.h"

using namespace gr;
namespace sp = gr::data::samplers;

namespace {

const nlohmann::json& reference() {
  static const nlohmann::json ref = test::load_reference("sampler_reference.json");
  return ref;
}

std::vector<int64_t> drain(sp::Sampler<>& s, size_t batch_size) {
  std::vector<int64_t> out;
  while (auto b = s.next(batch_size)) out.insert(out.end(), b->begin(), b->end());
  return out;
}

// Epoch `epoch` of a sampler, as a loader starts it.
std::vector<int64_t> epoch_of(sp::Sampler<>& s, size_t epoch, size_t batch_size = 3) {
  s.set_epoch(epoch);
  s.reset(std::nullopt);
  return drain(s, batch_size);
}

}  // namespace

TEST_CASE("torch_randperm is torch.randperm with a seeded CPU generator, bit for bit") {
  for (const auto& c : reference().at("randperm")) {
    const int64_t n = c.at("n");
    const uint64_t seed = c.at("seed");
    CAPTURE(n);
    CAPTURE(seed);
    CHECK(sp::torch_randperm(n, seed) == c.at("perm").get<std::vector<int64_t>>());
  }
}

TEST_CASE("the distributed samplers yield what torch's DistributedSampler yields, rank by rank") {
  int checked = 0;
  for (const auto& c : reference().at("distributed_sampler")) {
    const size_t n = c.at("n"), replicas = c.at("replicas"), epoch = c.at("epoch");
    const bool shuffle = c.at("shuffle"), drop_last = c.at("drop_last");
    const uint64_t seed = c.at("seed");
    for (size_t rank = 0; rank < replicas; ++rank) {
      CAPTURE(c.dump().substr(0, 120));
      CAPTURE(rank);
      const auto want = c.at("indices")[rank].get<std::vector<int64_t>>();
      if (shuffle) {
        sp::DistributedRandomSampler s(n, replicas, rank, /*allow_duplicates=*/!drop_last, seed);
        CHECK(s.local_sample_count() == want.size());
        CHECK(epoch_of(s, epoch) == want);
        CHECK(s.index() == want.size());
      } else {
        sp::DistributedSequentialSampler s(n, replicas, rank, !drop_last);
        CHECK(epoch_of(s, epoch) == want);
      }
      ++checked;
    }
  }
  CHECK(checked > 300);
}

TEST_CASE("DistributedRandomSampler: ranks cover the dataset, padding repeats the start, epochs differ") {
  const size_t n = 10;
  std::multiset<int64_t> all;
  for (size_t r = 0; r < 4; ++r) {
    sp::DistributedRandomSampler s(n, 4, r, /*allow_duplicates=*/true, /*seed=*/5);
    CHECK(s.local_sample_count() == 3);  // ceil(10 / 4)
    std::vector<int64_t> idx = drain(s, 2);  // the constructor starts epoch 0
    all.insert(idx.begin(), idx.end());
    s.reset();
    CHECK(drain(s, 5) == idx);           // the same epoch, the same order
    CHECK(epoch_of(s, 1) != idx);        // a new order every epoch
    CHECK(s.epoch() == 1);
    CHECK(epoch_of(s, 0) == idx);        // a pure function of the epoch
  }
  CHECK(all.size() == 12);  // 10 samples + 2 repeated to fill the last round
  for (int64_t i = 0; i < 10; ++i) CHECK(all.count(i) >= 1);
  // Without duplicates (torch's drop_last): floor(10 / 4) each, no repeats.
  std::set<int64_t> dropped;
  for (size_t r = 0; r < 4; ++r) {
    sp::DistributedRandomSampler s(n, 4, r, /*allow_duplicates=*/false, 5);
    std::vector<int64_t> idx = epoch_of(s, 3);
    CHECK(idx.size() == 2);
    dropped.insert(idx.begin(), idx.end());
  }
  CHECK(dropped.size() == 8);
  sp::DistributedRandomSampler empty(0, 2, 1);
  CHECK(drain(empty, 4).empty());
  // reset(new_size) resizes: ceil(4 / 2) = 2 each.
  sp::DistributedSequentialSampler seq(10, 2, 1);
  CHECK(drain(seq, 4) == std::vector<int64_t>{1, 3, 5, 7, 9});
  seq.reset(4);
  CHECK(drain(seq, 4) == std::vector<int64_t>{1, 3});
}

TEST_CASE("ShardSampler splits 0..n-1 without padding, the same every epoch") {
  std::vector<int64_t> seen;
  for (size_t r = 0; r < 3; ++r) {
    sp::ShardSampler s(10, 3, r);
    std::vector<int64_t> mine = drain(s, 2);
    CHECK(mine.size() == (r == 0 ? 4u : 3u));
    CHECK(mine[0] == static_cast<int64_t>(r));
    seen.insert(seen.end(), mine.begin(), mine.end());
    CHECK(epoch_of(s, 7) == mine);
  }
  std::sort(seen.begin(), seen.end());
  std::vector<int64_t> all(10);
  std::iota(all.begin(), all.end(), 0);
  CHECK(seen == all);
  sp::ShardSampler beyond(2, 4, 3);
  CHECK(drain(beyond, 1).empty());
}

TEST_CASE("the distributed samplers reject bad arguments, naming them") {
  CHECK_THROWS_WITH_AS(sp::DistributedRandomSampler(10, 2, 2), doctest::Contains("invalid rank 2, rank should be in the interval [0, 1]"),
                       gr::Error);
  CHECK_THROWS_WITH_AS(sp::DistributedSequentialSampler(10, 0, 0), doctest::Contains("num_replicas must be >= 1"),
                       gr::Error);
  CHECK_THROWS_WITH_AS(sp::ShardSampler(10, 0, 0), doctest::Contains("ShardSampler"), gr::Error);
  sp::DistributedRandomSampler s(10, 2, 0);
  CHECK_THROWS_WITH_AS(s.next(0), doctest::Contains("batch_size"), gr::Error);
  CHECK_THROWS_AS(sp::torch_randperm(-3, 0), gr::Error);
}
