// Writes small valid inputs for the fuzz targets: fuzz_seeds <dir> creates <dir>/safetensors
// (written by gr::save), <dir>/idx (plain and gzip) and <dir>/tcp_store_request (one of each
// request type, written by wire::append_request).
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/factory.h"
#include "distributed/store/tcp_store_wire.h"
#include "nn/serialize.h"

namespace fs = std::filesystem;
using namespace gr;

namespace {

void write(const fs::path& path, const std::vector<uint8_t>& bytes) {
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

void write_gz(const fs::path& path, const std::vector<uint8_t>& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
  gzclose(f);
}

std::vector<uint8_t> idx(uint8_t code, std::vector<uint32_t> dims, int value_bytes) {
  std::vector<uint8_t> out = {0, 0, code, static_cast<uint8_t>(dims.size())};
  size_t values = 1;
  for (uint32_t d : dims) {
    for (int i = 3; i >= 0; --i) out.push_back(static_cast<uint8_t>(d >> (8 * i)));
    values *= d;
  }
  for (size_t i = 0; i < values * value_bytes; ++i) out.push_back(static_cast<uint8_t>(i * 37));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_seeds <dir>\n");
    return 2;
  }
  fs::path root = argv[1];
  for (const char* sub : {"safetensors", "idx", "tcp_store_request"}) fs::create_directories(root / sub);

  OrderedDict<Tensor> one;
  Tensor w = empty({2, 3}, kFloat32);
  for (int i = 0; i < 6; ++i) w.data_ptr<float>()[i] = 0.5f * i;
  one.insert("w", w);
  save(one, root / "safetensors" / "one.safetensors");
  OrderedDict<Tensor> mixed;
  Tensor a = empty({4}, kInt64), b = empty({2}, kUInt8), d = empty({3}, kBool);
  for (int i = 0; i < 4; ++i) a.data_ptr<int64_t>()[i] = i - 1;
  for (int i = 0; i < 2; ++i) b.data_ptr<uint8_t>()[i] = static_cast<uint8_t>(200 + i);
  for (int i = 0; i < 3; ++i) d.data_ptr<bool>()[i] = i % 2;
  mixed.insert("a", a);
  mixed.insert("b", b);
  mixed.insert("c", empty({0, 3}, kFloat64));
  mixed.insert("d", d);
  save(mixed, root / "safetensors" / "mixed.safetensors", {{"format", "pt"}});

  write(root / "idx" / "u8", idx(0x08, {2, 3}, 1));
  write(root / "idx" / "i16", idx(0x0B, {3}, 2));
  write(root / "idx" / "f32", idx(0x0D, {2, 1, 2}, 4));
  write(root / "idx" / "f64", idx(0x0E, {1}, 8));
  write_gz(root / "idx" / "u8.gz", idx(0x08, {4, 4}, 1));
  write_gz(root / "idx" / "i32.gz", idx(0x0C, {2}, 4));

  using namespace gr::distributed::wire;
  auto bytes = [](const std::string& s) { return distributed::Bytes(s.begin(), s.end()); };
  std::vector<Request> requests = {
      {Op::Set, {"key"}, bytes("value"), {}, 0},
      {Op::Get, {"key"}, {}, {}, 30000},
      {Op::Add, {"counter"}, {}, {}, -3},
      {Op::CompareSet, {"key"}, bytes("old"), bytes("new"), 0},
      {Op::Check, {"a", "b"}, {}, {}, 0},
      {Op::Wait, {"a", "b", "c"}, {}, {}, 100},
      {Op::Delete, {"key"}, {}, {}, 0},
      {Op::NumKeys, {}, {}, {}, 0},
      {Op::Join, {}, {}, {}, 0},
  };
  std::vector<uint8_t> all;
  for (const Request& r : requests) {
    std::vector<uint8_t> one_request;
    append_request(one_request, r);
    write(root / "tcp_store_request" / op_name(r.op), one_request);
    append_request(all, r);
  }
  write(root / "tcp_store_request" / "pipelined", all);
  return 0;
}
