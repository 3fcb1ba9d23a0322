// TokenDataset: windows with targets shifted by one, a pure function of (seed, epoch),
// disjoint across ranks, byte and uint16 files, and its errors. See Note [Token windows].
#include <algorithm>
#include <set>

#include "data_files.h"
#include "test_util.h"

using namespace gr;
using gr::test::error_of;
namespace ds = gr::data::datasets;

namespace {

// Tokens t_i = (i * 7) % 1000 as little-endian uint16: every window can be told apart.
std::string write_uint16(const test::TempDir& dir, size_t n) {
  test::Bytes bytes;
  for (size_t i = 0; i < n; ++i) {
    const auto t = static_cast<uint16_t>((i * 7) % 1000);
    bytes.push_back(static_cast<uint8_t>(t & 0xff));
    bytes.push_back(static_cast<uint8_t>(t >> 8));
  }
  test::write_file(dir / "tokens.bin", bytes);
  return dir / "tokens.bin";
}

std::vector<int64_t> values(const Tensor& t) {
  Tensor c = t.contiguous();
  const int64_t* p = c.data_ptr<int64_t>();
  return {p, p + c.numel()};
}

std::vector<int64_t> starts(const ds::TokenDataset& d) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < *d.size(); ++i) out.push_back(d.start(i));
  return out;
}

}  // namespace

TEST_CASE("TokenDataset windows: input and target shifted by one, read from the file") {
  test::TempDir dir;
  ds::TokenDataset d(write_uint16(dir, 103), ds::TokenDatasetOptions(10).seed(3));
  CHECK(d.num_tokens() == 103);
  CHECK(d.size() == std::optional<size_t>(10));  // (103 - 1) / 10
  for (size_t i = 0; i < 10; ++i) {
    data::Example<> e = d.get(i);
    CHECK(e.data.scalar_type() == kInt64);
    CHECK(test::shape(e.data) == std::vector<int64_t>{10});
    const int64_t s = d.start(i);
    CHECK(s >= 0);
    CHECK(s + 11 <= 103);
    std::vector<int64_t> in = values(e.data), target = values(e.target);
    for (int64_t k = 0; k < 10; ++k) {
      CHECK(in[k] == ((s + k) * 7) % 1000);
      CHECK(target[k] == ((s + k + 1) * 7) % 1000);
    }
  }
  // Windows of one epoch never overlap: their starts differ by multiples of the window.
  std::vector<int64_t> s = starts(d);
  std::sort(s.begin(), s.end());
  for (size_t i = 1; i < s.size(); ++i) CHECK(s[i] - s[i - 1] >= 10);
  CHECK((s[1] - s[0]) % 10 == 0);
  CHECK_THROWS_WITH_AS(d.get(10), doctest::Contains("index 10 out of range [0, 10)"), gr::Error);
}

TEST_CASE("TokenDataset is deterministic for (seed, epoch) and differs across epochs and seeds") {
  test::TempDir dir;
  const std::string path = write_uint16(dir, 1000);
  ds::TokenDataset a(path, ds::TokenDatasetOptions(8).seed(1)), b(path, ds::TokenDatasetOptions(8).seed(1));
  CHECK(starts(a) == starts(b));
  const std::vector<int64_t> epoch0 = starts(a);
  a.set_epoch(1);
  CHECK(a.epoch() == 1);
  const std::vector<int64_t> epoch1 = starts(a);
  CHECK(epoch1 != epoch0);
  b.set_epoch(1);
  CHECK(starts(b) == epoch1);
  a.set_epoch(0);
  CHECK(starts(a) == epoch0);  // replaying an epoch gives it back
  ds::TokenDataset other_seed(path, ds::TokenDatasetOptions(8).seed(2));
  CHECK(starts(other_seed) != epoch0);
  // A copy keeps its epoch: set_epoch on the original does not reach it.
  ds::TokenDataset copy = a;
  a.set_epoch(2);
  CHECK(starts(copy) == epoch0);
  CHECK_THROWS_WITH_AS(a.set_epoch(-1), doctest::Contains("epoch must be >= 0"), gr::Error);
}

TEST_CASE("TokenDataset ranks get disjoint windows of equal count") {
  test::TempDir dir;
  const std::string path = write_uint16(dir, 1001);  // (1001 - 1) / 10 = 100 windows
  for (int64_t epoch : {0, 4}) {
    std::set<int64_t> all;
    for (int64_t rank = 0; rank < 3; ++rank) {
      ds::TokenDataset d(path, ds::TokenDatasetOptions(10).seed(9).num_replicas(3).rank(rank));
      d.set_epoch(epoch);
      CHECK(d.size() == std::optional<size_t>(33));  // 100 / 3, the same on every rank
      for (int64_t s : starts(d)) CHECK(all.insert(s).second);
    }
    CHECK(all.size() == 99);
  }
}

TEST_CASE("TokenDataset reads files of bytes, and with a loader gives batches [B, L]") {
  test::TempDir dir;
  test::write_file(dir / "bytes.bin", test::iota_bytes(65));
  ds::TokenDataset d(dir / "bytes.bin", ds::TokenDatasetOptions(16).format(ds::TokenFormat::kUInt8).seed(4));
  CHECK(d.num_tokens() == 65);
  CHECK(d.size() == std::optional<size_t>(4));
  auto loader = data::make_data_loader<data::samplers::SequentialSampler>(d.map(data::transforms::Stack<>()), 2);
  int64_t batches = 0;
  for (auto& batch : *loader) {
    CHECK(test::shape(batch.data) == std::vector<int64_t>{2, 16});
    std::vector<int64_t> in = values(batch.data), target = values(batch.target);
    for (size_t k = 0; k < in.size(); ++k) CHECK(target[k] == in[k] + 1);  // byte i is i
    ++batches;
  }
  CHECK(batches == 2);
}

TEST_CASE("a loader sets the epoch of its TokenDataset copies: epoch e's batches are set_epoch(e)'s windows") {
  test::TempDir dir;
  const std::string path = write_uint16(dir, 1000);
  ds::TokenDataset d(path, ds::TokenDatasetOptions(8).seed(5));
  for (size_t workers : {0, 2}) {
    CAPTURE(workers);
    auto loader = data::make_data_loader<data::samplers::SequentialSampler>(
        d.map(data::transforms::Stack<>()), data::DataLoaderOptions(4).drop_last(true).workers(workers));
    for (int64_t epoch : {0, 1, 3}) {
      ds::TokenDataset expected = d;
      expected.set_epoch(epoch);
      size_t window = 0;
      for (data::Example<>& batch : loader->epoch(epoch)) {
        for (int64_t row = 0; row < batch.data.size(0); ++row, ++window)
          CHECK(values(batch.data[row]) == values(expected.get(window).data));
      }
      CHECK(window == *d.size() / 4 * 4);
    }
  }
  CHECK(d.epoch() == 0);  // the loader's copies, not the original
}

TEST_CASE("TokenDataset errors name the file and the problem") {
  test::TempDir dir;
  CHECK(error_of([&] { ds::TokenDataset(dir / "absent.bin", 4); }) ==
        "TokenDataset: cannot open '" + dir / "absent.bin" + "': No such file or directory");
  test::write_file(dir / "odd.bin", test::iota_bytes(21));
  CHECK(error_of([&] { ds::TokenDataset(dir / "odd.bin", 4); }) ==
        "TokenDataset: '" + dir / "odd.bin" +
            "' has 21 bytes, an odd count, but uint16 tokens take 2 bytes each (is it a file of bytes? use "
            "TokenFormat::kUInt8)");
  const std::string path = write_uint16(dir, 8);
  CHECK(error_of([&] { ds::TokenDataset(path, 8); }) ==
        "TokenDataset: '" + path + "' holds 8 tokens but a window of 8 needs at least 9 (the input and the target "
                                   "shifted by one)");
  CHECK(error_of([&] { ds::TokenDataset(path, ds::TokenDatasetOptions(3).num_replicas(3)); }) ==
        "TokenDataset: '" + path + "' holds 2 windows of 3 tokens, fewer than the 3 replicas");
  CHECK_THROWS_WITH_AS(ds::TokenDataset(path, 0), doctest::Contains("window must be >= 1"), gr::Error);
  CHECK_THROWS_WITH_AS(ds::TokenDataset(path, ds::TokenDatasetOptions(2).num_replicas(2).rank(2)),
                       doctest::Contains("rank 2 out of range"), gr::Error);
  ds::TokenDataset exact(path, 7);  // 8 tokens: exactly one window
  CHECK(exact.size() == std::optional<size_t>(1));
  CHECK(exact.start(0) == 0);
}

TEST_CASE("TokenDataset over tokens in memory equals the one over the same file") {
  test::TempDir dir;
  const std::string path = write_uint16(dir, 500);
  ds::TokenDatasetOptions o = ds::TokenDatasetOptions(10).seed(3).num_replicas(2).rank(1);
  ds::TokenDataset from_file(path, o);
  ds::TokenDataset in_memory(ds::TokenDataset::read_file(path, ds::TokenFormat::kUInt16), o, "split");
  for (int64_t epoch : {0, 1}) {
    from_file.set_epoch(epoch);
    in_memory.set_epoch(epoch);
    CHECK(starts(from_file) == starts(in_memory));
    CHECK(values(from_file.get(3).data) == values(in_memory.get(3).data));
  }
  CHECK(error_of([] { ds::TokenDataset(std::vector<uint16_t>(5), 8, "val split"); }) ==
        "TokenDataset: 'val split' holds 5 tokens but a window of 8 needs at least 9 (the input and the target "
        "shifted by one)");
}
