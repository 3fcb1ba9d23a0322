// IDX reader: every dtype, plain and gzip files, and a clear error for each kind of bad file.
#include <cstring>

#include "data/idx.h"
#include "data_files.h"
#include "test_util.h"

using namespace gr;
using gr::test::error_of;
using gr::test::Bytes;
using gr::test::concat;
using gr::test::idx_header;

namespace {

// Checks that reading `path` fails with a message naming the file and containing `what`.
void check_idx_error(const std::string& path, const std::string& what) {
  std::string message = error_of([&] { data::read_idx(path); });
  INFO("message: ", message);
  CHECK(message.find(path) != std::string::npos);
  CHECK(message.find(what) != std::string::npos);
}

// Pseudo-random bytes (they do not compress, so a corrupted gzip body stays detectable).
Bytes noise(size_t n) {
  Bytes b(n);
  uint32_t x = 12345;
  for (auto& v : b) v = static_cast<uint8_t>((x = x * 1664525u + 1013904223u) >> 24);
  return b;
}

}  // namespace

TEST_CASE("read_idx reads uint8 arrays from plain and gzip files alike") {
  test::TempDir dir;
  Bytes file = concat(idx_header(0x08, {3, 4, 5}), test::iota_bytes(60));
  test::write_file(dir / "a-idx3-ubyte", file);
  test::write_gz(dir / "a-idx3-ubyte.gz", file);
  test::write_gz(dir / "gzip-without-suffix", file);  // found by its magic, not its name
  for (const char* name : {"a-idx3-ubyte", "a-idx3-ubyte.gz", "gzip-without-suffix"}) {
    CAPTURE(name);
    Tensor t = data::read_idx(dir / name);
    CHECK(t.scalar_type() == kUInt8);
    CHECK(test::shape(t) == std::vector<int64_t>{3, 4, 5});
    const uint8_t* p = t.data_ptr<uint8_t>();
    for (int i = 0; i < 60; ++i) CHECK(p[i] == i);
  }
}

TEST_CASE("read_idx converts big-endian int8, int16, int32, float32 and float64") {
  test::TempDir dir;
  auto be = [](uint64_t bits, int bytes) {
    Bytes b;
    for (int i = bytes - 1; i >= 0; --i) b.push_back(static_cast<uint8_t>(bits >> (8 * i)));
    return b;
  };
  auto f32 = [&](float v) {
    uint32_t u;
    std::memcpy(&u, &v, 4);
    return be(u, 4);
  };
  auto f64 = [&](double v) {
    uint64_t u;
    std::memcpy(&u, &v, 8);
    return be(u, 8);
  };
  struct Case {
    uint8_t code;
    Bytes payload;
    ScalarType dtype;
    std::vector<double> expected;
  };
  std::vector<Case> cases = {
      {0x09, {0x7F, 0x80, 0xFF}, kInt64, {127, -128, -1}},
      {0x0B, concat(concat(be(0x7FFF, 2), be(0x8000, 2)), be(0xFFFE, 2)), kInt64, {32767, -32768, -2}},
      {0x0C, concat(concat(be(0x7FFFFFFF, 4), be(0x80000000u, 4)), be(0x00010203, 4)), kInt64,
       {2147483647, -2147483648.0, 66051}},
      {0x0D, concat(concat(f32(1.5f), f32(-2.25f)), f32(3e10f)), kFloat32, {1.5, -2.25, 3e10}},
      {0x0E, concat(concat(f64(0.1), f64(-1e300)), f64(42)), kFloat64, {0.1, -1e300, 42}},
  };
  for (const Case& c : cases) {
    CAPTURE(int(c.code));
    Bytes file = concat(idx_header(c.code, {3}), c.payload);
    test::write_file(dir / "plain", file);
    test::write_gz(dir / "packed.gz", file);
    for (const char* name : {"plain", "packed.gz"}) {
      Tensor t = data::read_idx(dir / name);
      CHECK(t.scalar_type() == c.dtype);
      test::check_values(t, c.expected, 1e-7);
    }
  }
}

TEST_CASE("read_idx reads a 60000x28x28-sized header and an empty array") {
  test::TempDir dir;
  test::write_file(dir / "empty", idx_header(0x08, {0, 28, 28}));
  CHECK(test::shape(data::read_idx(dir / "empty")) == std::vector<int64_t>{0, 28, 28});
}

TEST_CASE("read_idx errors name the file and the problem") {
  test::TempDir dir;
  const Bytes good = concat(idx_header(0x08, {10, 20}), noise(200));

  check_idx_error(dir / "absent-idx1-ubyte", "no such file");
  check_idx_error(dir.str(), "not a regular file");

  test::write_file(dir / "magic", concat({0x1F, 0x00, 0x08, 0x01}, noise(10)));
  check_idx_error(dir / "magic", "bad magic bytes 0x1F 0x00 0x08 0x01");
  test::write_file(dir / "short-header", {0x00, 0x00});
  check_idx_error(dir / "short-header", "truncated header");
  test::write_file(dir / "short-dims", {0x00, 0x00, 0x08, 0x03, 0x00, 0x00, 0x00, 0x02});
  check_idx_error(dir / "short-dims", "truncated header");

  test::write_file(dir / "dtype", concat(idx_header(0x0A, {4}), noise(4)));
  check_idx_error(dir / "dtype", "unknown dtype code 0x0A");

  test::write_file(dir / "truncated", Bytes(good.begin(), good.end() - 1));
  check_idx_error(dir / "truncated", "truncated data");
  test::write_gz(dir / "truncated.gz", Bytes(good.begin(), good.end() - 7));
  check_idx_error(dir / "truncated.gz", "truncated data");

  test::write_file(dir / "trailing", concat(good, {1, 2, 3}));
  check_idx_error(dir / "trailing", "trailing garbage: 3 bytes");
  test::write_gz(dir / "trailing.gz", concat(good, {1, 2, 3}));
  check_idx_error(dir / "trailing.gz", "trailing garbage: 3 bytes");

  test::write_file(dir / "ndims0", {0x00, 0x00, 0x08, 0x00});
  check_idx_error(dir / "ndims0", "absurd number of dimensions 0");
  test::write_file(dir / "ndims200", concat({0x00, 0x00, 0x08, 200}, noise(800)));
  check_idx_error(dir / "ndims200", "absurd number of dimensions 200");
  test::write_file(dir / "dim-sign", idx_header(0x08, {0xFFFFFFFFu, 1}));
  check_idx_error(dir / "dim-sign", "absurd dims");
  test::write_file(dir / "dim-product", idx_header(0x0E, {2000000000u, 2000000000u, 4}));
  check_idx_error(dir / "dim-product", "absurd dims");
  // From fuzzing the reader (fuzz/fuzz_idx): a 0 dim hid huge others, whose strides overflowed int64.
  test::write_file(dir / "zero-hides-huge", idx_header(0x08, {0, 0x7FFFFFFFu, 0x7FFFFFFFu, 0x7FFFFFFFu}));
  check_idx_error(dir / "zero-hides-huge", "absurd dims");
  // Plausible dims in a tiny gzip file: rejected before a 4 GB allocation.
  test::write_gz(dir / "huge.gz", idx_header(0x08, {1000000, 4000}));
  check_idx_error(dir / "huge.gz", "more than a");
}

TEST_CASE("read_idx rejects unreadable gzip streams") {
  test::TempDir dir;
  const Bytes good = concat(idx_header(0x08, {50, 40}), noise(2000));
  test::write_gz(dir / "good.gz", good);
  const Bytes packed = test::read_file(dir / "good.gz");
  REQUIRE(packed.size() > 200);

  test::write_file(dir / "not-gzip.gz", good);  // a plain file named .gz
  check_idx_error(dir / "not-gzip.gz", "not a gzip stream");
  test::write_file(dir / "empty.gz", {});
  check_idx_error(dir / "empty.gz", "not a gzip stream");

  Bytes cut(packed.begin(), packed.begin() + packed.size() / 2);  // stream ends mid-deflate
  test::write_file(dir / "cut.gz", cut);
  check_idx_error(dir / "cut.gz", "truncated gzip stream");
  Bytes no_trailer(packed.begin(), packed.end() - 8);  // data complete, CRC and size missing
  test::write_file(dir / "no-trailer.gz", no_trailer);
  check_idx_error(dir / "no-trailer.gz", "truncated gzip stream");

  Bytes corrupt = packed;
  for (size_t i = 100; i < 120; ++i) corrupt[i] ^= 0x5A;
  test::write_file(dir / "corrupt.gz", corrupt);
  check_idx_error(dir / "corrupt.gz", "gzip stream");
  Bytes bad_crc = packed;
  bad_crc[bad_crc.size() - 8] ^= 1;
  test::write_file(dir / "bad-crc.gz", bad_crc);
  check_idx_error(dir / "bad-crc.gz", "unreadable gzip stream (incorrect data check)");
}
