// Writes small valid inputs for the fuzz targets, one folder per target under <dir>: each
// written by the code that writes such files (gr::save, save_snapshot, FileStore,
// wire::append_request/append_response), the IDX, CIFAR-10 and flight recorder files by
// hand in their documented formats.
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/factory.h"
#include "distributed/store/file_store.h"
#include "distributed/store/tcp_store_wire.h"
#include "nn/serialize.h"
#include "nn/snapshot.h"

namespace fs = std::filesystem;
using namespace gr;

namespace {

void write(const fs::path& path, const std::vector<uint8_t>& bytes) {
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

void write(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
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
  for (const char* sub : {"safetensors", "idx", "tcp_store_request", "tcp_store_response", "cifar10", "file_store",
                          "snapshot", "flight"})
    fs::create_directories(root / sub);

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

  // Responses: the input's first byte picks the request (1 + byte % 9, fuzz_tcp_store_response).
  auto response = [&](const std::string& name, Op op, const Response& r) {
    std::vector<uint8_t> out = {static_cast<uint8_t>(static_cast<uint8_t>(op) - 1)};
    append_response(out, op, r);
    write(root / "tcp_store_response" / name, out);
  };
  response("set", Op::Set, {});
  response("get", Op::Get, {Status::Ok, bytes("value"), 0, {}, {}});
  response("get_timeout", Op::Get, {Status::Timeout, {}, 0, {"key"}, {}});
  response("add", Op::Add, {Status::Ok, {}, -3, {}, {}});
  response("compare_set", Op::CompareSet, {Status::Ok, bytes("new"), 0, {}, {}});
  response("check", Op::Check, {Status::Ok, {}, 1, {}, {}});
  response("wait_timeout", Op::Wait, {Status::Timeout, {}, 0, {"a", "b"}, {}});
  response("delete", Op::Delete, {Status::Ok, {}, 0, {}, {}});
  response("num_keys", Op::NumKeys, {Status::Ok, {}, 7, {}, {}});
  response("join", Op::Join, {Status::Ok, {}, 2, {}, {}});
  response("error", Op::Add, {Status::Error, {}, 0, {}, "add: the value of 'k' is not an integer"});

  // CIFAR-10: records of 1 label byte + 3072 pixel bytes.
  for (int n : {1, 2}) {
    std::vector<uint8_t> records;
    for (int i = 0; i < n; ++i) {
      records.push_back(static_cast<uint8_t>(3 * i + 1));
      for (int j = 0; j < 3072; ++j) records.push_back(static_cast<uint8_t>(7 * i + j));
    }
    write(root / "cifar10" / ("records" + std::to_string(n)), records);
  }

  // FileStore logs, written by FileStore itself (each object adds its join and leave records).
  fs::remove(root / "file_store" / "ops");
  {
    distributed::FileStore first((root / "file_store" / "ops").string(), 3);
    distributed::FileStore second((root / "file_store" / "ops").string());
    first.set("key", std::string("value"));
    second.add("counter", 5);
    first.compare_set("key", bytes("value"), bytes("other"));
    second.set("gone", std::string("x"));
    second.delete_key("gone");
  }

  // A snapshot with model, optimizer, scheduler, generators and user values.
  Snapshot snap;
  snap.model.insert("0.weight", w);
  snap.model.insert("0.bias", empty({0}, kFloat32));
  snap.optimizer.insert("state.0.step", a);
  snap.epoch = 2;
  snap.step_in_epoch = 5;
  snap.global_step = 17;
  snap.world_size = 4;
  snap.scheduler_last_epoch = 2;
  snap.generators["default"] = {42, 128};
  snap.generators["data"] = {7, 0};
  snap.user["note"] = "seed";
  save_snapshot((root / "snapshot" / "snapshot").string(), snap);

  // Flight recorder dumps (distributed/backends/flight_recorder.cpp's format), the ranks of
  // one job separated by NUL bytes as fuzz_flight splits them: rank 1 skips an all-reduce,
  // and records its stack.
  auto dump = [](int rank, const std::string& reason, const std::string& entries) {
    return "{\"format\":\"gradring-flight-recorder\",\"version\":1,\"reason\":\"" + reason +
           "\",\"pid\":100,\"time_us\":5,\"host\":\"h\",\"world_size\":2,\"rank\":" + std::to_string(rank) +
           ",\n \"groups\": [\n  {\"backend\":\"gloo\",\"name\":\"default_pg\",\"rank\":" + std::to_string(rank) +
           ",\"ranks\":[0,1],\"size\":2,\"capacity\":8,\n  \"entries\": [" + entries + "\n  ]}\n ]}\n";
  };
  auto entry = [](int id, const std::string& shape, const std::string& state, const std::string& extra = "") {
    return "\n   {\"id\":" + std::to_string(id) + ",\"op\":\"allreduce\",\"seq\":" + std::to_string(id) +
           ",\"reduce_op\":\"sum\",\"dtype\":\"float32\",\"shape\":" + shape +
           ",\"bytes\":4,\"tensors\":1,\"state\":\"" + state + "\",\"issued_us\":1" + extra + "}";
  };
  const std::string stack = ",\"stack\":[\"/lib/libgradring.so(gr::distributed::ProcessGroup::allreduce+0x10)\","
                            "\"/usr/bin/train(+0x6a6c3)\",\"/usr/bin/train(main+0x1f)\"]";
  const std::string rank0 = dump(0, "signal SIGTERM",
                                 entry(1, "[1000]", "completed") + "," + entry(2, "[1]", "completed") + "," +
                                     entry(3, "[1000]", "completed") + "," + entry(4, "[1]", "started"));
  const std::string rank1 = dump(1, "collective failed",
                                 entry(1, "[1000]", "completed") + "," + entry(2, "[1]", "completed") + "," +
                                     entry(3, "[1000]", "completed") + "," + entry(4, "[1000]", "issued", stack));
  write(root / "flight" / "skip", rank0 + std::string(1, '\0') + rank1);
  write(root / "flight" / "one_rank", rank0);
  return 0;
}
