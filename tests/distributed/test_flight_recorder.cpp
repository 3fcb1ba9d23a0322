// The flight recorder in one process: what a group's calls leave in its ring (sequence
// numbers, ops, shapes, bytes, states and times), the ring keeping only its last entries,
// late updates to reused slots dropped, consistent entries while threads record and dump at
// once, Work marking entries failed, and dump errors. The end-to-end runs (2 and 4 ranks of
// gloo, shm, MPI, and gradring-flight naming the culprit) are tests/distributed/flight/.
#include <nlohmann/json.hpp>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include "distributed/backends/flight_recorder.h"
#include "distributed/backends/process_group_shm.h"
#include "distributed/store/file_store.h"
#include "test_util.h"

using namespace gr;
using namespace gr::distributed;
using nlohmann::json;

namespace {

std::filesystem::path temp_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / (name + "-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

CallInfo call_of(OpType type, uint64_t sequence, const Tensor& t) {
  CallInfo c;
  c.type = type;
  c.sequence = sequence;
  c.tensor = t;
  c.tensors = 1;
  c.reduce_op = type == OpType::Allreduce ? std::optional(ReduceOp::Sum) : std::nullopt;
  return c;
}

}  // namespace

TEST_CASE("flight recorder: a group's calls with sequence numbers, shapes, bytes, states and times") {
  REQUIRE(FlightRecorder::configured_capacity() > 0);  // GRADRING_FLIGHT_RECORDER_SIZE unset: 2000
  const auto dir = temp_dir("gradring-flight-test");
  auto store = std::make_shared<FileStore>((dir / "store").string(), 1);
  auto pg = std::make_shared<ProcessGroupShm>(store, 0, 1);
  pg->set_group_name("test_group", {7});
  Tensor a = ones({2, 3}), b = zeros({4}, kInt64);
  pg->allreduce(a)->wait();
  pg->broadcast(b, 0)->wait();
  pg->barrier()->wait();

  const std::string path = dump_flight_recorder("asked by the test", dir.string());
  CHECK(path == flight_dump_path(dir.string(), 0));
  std::ifstream in(path);
  const json d = json::parse(in);
  CHECK(d["format"] == "gradring-flight-recorder");
  CHECK(d["reason"] == "asked by the test");
  json group;
  for (const json& g : d["groups"])
    if (g["name"] == "test_group") group = g;
  REQUIRE(group.is_object());
  CHECK(group["backend"] == "shm");
  CHECK(group["ranks"] == json::array({7}));
  CHECK(group["capacity"] == 2000);
  const json& e = group["entries"];
  REQUIRE(e.size() == 3);
  CHECK(e[0]["op"] == "allreduce");
  CHECK(e[0]["reduce_op"] == "sum");
  CHECK(e[0]["dtype"] == "float32");
  CHECK(e[0]["shape"] == json::array({2, 3}));
  CHECK(e[0]["bytes"] == 24);
  CHECK(e[1]["op"] == "broadcast");
  CHECK(e[1]["dtype"] == "int64");
  CHECK(e[1]["root"] == 0);
  CHECK(e[2]["op"] == "barrier");
  CHECK_FALSE(e[2].contains("shape"));
  for (int i = 0; i < 3; ++i) {
    CAPTURE(i);
    CHECK(e[i]["seq"] == i);
    CHECK(e[i]["state"] == "completed");
    CHECK(e[i]["issued_us"].get<int64_t>() <= e[i]["started_us"].get<int64_t>());
    CHECK(e[i]["started_us"].get<int64_t>() <= e[i]["finished_us"].get<int64_t>());
    CHECK_FALSE(e[i].contains("stack"));  // GRADRING_FLIGHT_RECORDER_STACKS unset
  }
  pg.reset();
  std::filesystem::remove_all(dir);
}

TEST_CASE("flight recorder: the ring keeps the last calls; updates to reused slots are dropped") {
  FlightRecorder r(3, "test", 0, 1);
  std::vector<uint64_t> ids;
  for (uint64_t s = 0; s < 5; ++s) ids.push_back(r.record(call_of(OpType::Allreduce, s, ones({1})), -1, -1));
  r.set_state(ids[0], FlightState::Completed);  // its slot now holds call 3: nothing changes
  r.set_state(ids[4], FlightState::Started);
  r.set_state(ids[3], FlightState::Failed);
  r.set_state(ids[3], FlightState::Started);  // late: a finished call stays finished
  const json g = json::parse(r.to_json());
  REQUIRE(g["entries"].size() == 3);
  CHECK(g["entries"][0]["seq"] == 2);
  CHECK(g["entries"][0]["state"] == "issued");
  CHECK(g["entries"][1]["seq"] == 3);
  CHECK(g["entries"][1]["state"] == "failed");
  CHECK(g["entries"][2]["seq"] == 4);
  CHECK(g["entries"][2]["state"] == "started");
  const json p2p = json::parse([&] {
    FlightRecorder q(2, "test", 0, 2);
    CallInfo c = call_of(OpType::Send, 0, ones({3}));
    q.record(c, 1, 9);
    return q.to_json();
  }());
  CHECK(p2p["entries"][0]["op"] == "send");
  CHECK(p2p["entries"][0]["peer"] == 1);
  CHECK(p2p["entries"][0]["tag"] == 9);
  CHECK_FALSE(p2p["entries"][0].contains("seq"));  // point to point takes no sequence number
}

// Note [Flight recorder slots]: readers keep only untorn copies. Each call's shape encodes
// its sequence number, so a copy mixing two calls would show.
TEST_CASE("flight recorder: entries stay consistent while threads record and dump at once") {
  FlightRecorder r(64, "test", 0, 1);
  std::atomic<bool> done{false};
  std::atomic<uint64_t> next{0};
  int checked = 0, torn = 0;
  std::vector<std::thread> writers;
  for (int w = 0; w < 3; ++w)
    writers.emplace_back([&] {
      std::vector<Tensor> shapes;
      for (int64_t i = 0; i < 15; ++i) shapes.push_back(empty({i % 5 + 1, i % 3 + 1}));
      for (int mine = 1; !done.load(); ++mine) {  // until the reader has seen enough
        const uint64_t s = next.fetch_add(1);
        const uint64_t id = r.record(call_of(OpType::Allreduce, s, shapes[s % 15]), -1, -1);
        r.set_state(id, FlightState::Completed);
        // Pauses let a reader through: it keeps no copy of a slot rewritten while it read.
        if (mine % 16 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    });
  while (next.load() < 1000) std::this_thread::yield();
  for (int dump = 0; dump < 200; ++dump) {
    const json entries = json::parse(r.to_json())["entries"];
    if (dump % 50 == 0) MESSAGE("dump ", dump, ": ", entries.size(), " whole entries of 64, after ", next.load(), " calls");
    for (const json& e : entries) {
      const int64_t seq = e["seq"];
      if (e["shape"] != json::array({seq % 5 + 1, seq % 3 + 1}) || e["bytes"] != 4 * (seq % 5 + 1) * (seq % 3 + 1))
        ++torn;
      ++checked;
    }
  }
  done = true;
  for (auto& w : writers) w.join();
  CHECK(torn == 0);
  CHECK(checked > 0);
  CHECK(json::parse(r.to_json())["entries"].size() == 64);
}

TEST_CASE("flight recorder: Work marks its entry completed or failed") {
  auto r = std::make_shared<FlightRecorder>(4, "test", 0, 1);
  auto ok = std::make_shared<Work>("ok", FlightEntry{r, r->record(call_of(OpType::Barrier, 0, Tensor()), -1, -1)});
  auto bad = std::make_shared<Work>("bad", FlightEntry{r, r->record(call_of(OpType::Barrier, 1, Tensor()), -1, -1)});
  ok->mark_started();
  ok->finish();
  bad->finish(std::make_exception_ptr(gr::Error("peer gone", __FILE__, __LINE__)));
  const json g = json::parse(r->to_json());
  CHECK(g["entries"][0]["state"] == "completed");
  CHECK(g["entries"][1]["state"] == "failed");
  CHECK_FALSE(g["entries"][1].contains("started_us"));  // failed before it started
  // A wait that times out names the call (and would dump, with GRADRING_FLIGHT_RECORDER_DIR).
  auto pending = std::make_shared<Work>("pending", FlightEntry{r, r->record(call_of(OpType::Barrier, 2, Tensor()), -1, -1)});
  CHECK_THROWS_WITH_AS(pending->wait(std::chrono::milliseconds(1)), doctest::Contains("pending"), gr::Error);
}

TEST_CASE("flight recorder: a dump into a folder that does not exist names the variable") {
  CHECK_THROWS_WITH_AS(dump_flight_recorder("test", "/nonexistent/gradring-flight"),
                       doctest::Contains("GRADRING_FLIGHT_RECORDER_DIR"), gr::Error);
  CHECK(dump_flight_recorder("test", "") == "");  // no folder anywhere: nothing is written
}
