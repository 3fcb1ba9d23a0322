// The profiler: records kernel spans only while enabled, nests self time correctly, and
// writes a Chrome trace that parses as JSON.
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "test_util.h"

using namespace gr;

TEST_CASE("profiler records named spans only while enabled") {
  profiler::reset();
  Tensor a = ones({100}), b = ones({100});
  a + b;  // not recorded
  CHECK(profiler::events().empty());
  profiler::enable();
  {
    profiler::ScopedEvent outer("outer");
    a + b;
    a * b;
  }
  profiler::enable(false);
  a + b;
  std::vector<profiler::OpStats> s = profiler::summary();
  auto find = [&](const std::string& name) {
    for (const auto& o : s)
      if (o.name == name) return o;
    FAIL("no row for ", name);
    return profiler::OpStats{};
  };
  CHECK(find("add_stub").calls == 1);
  CHECK(find("add_stub").category == "kernel");
  CHECK(find("mul_stub").calls == 1);
  profiler::OpStats outer = find("outer");
  CHECK(outer.self_ms <= outer.total_ms);
  CHECK(outer.total_ms >= find("add_stub").total_ms + find("mul_stub").total_ms);
  CHECK(profiler::table().find("add_stub") != std::string::npos);
}

TEST_CASE("profiler writes a Chrome trace with process labels and named tracks") {
  profiler::reset();
  profiler::enable();
  Tensor x = randn({4, 4}, TensorOptions(kFloat32).requires_grad(true));
  (x.matmul(x).relu()).sum().backward();
  const int64_t t0 = profiler::now_ns();
  profiler::record("allreduce bucket 0", "comm", t0, t0 + 5000, "comm");
  profiler::enable(false);
  profiler::record("not recorded (profiler off)", "comm", t0, t0 + 1, "comm");
  std::string path = (std::filesystem::temp_directory_path() / "gradring_trace.json").string();
  profiler::write_chrome_trace(path, 3, "rank 3");
  std::ifstream in(path);
  nlohmann::json trace = nlohmann::json::parse(in);
  bool saw_backward = false, saw_process_name = false;
  int comm_tid = -1, comm_spans = 0;
  for (const auto& e : trace.at("traceEvents")) {
    CHECK(e.at("pid") == 3);
    if (e.at("ph") == "M") {
      if (e.at("name") == "process_name") saw_process_name = e.at("args").at("name") == "rank 3";
      if (e.at("name") == "thread_name" && e.at("args").at("name") == "comm") comm_tid = e.at("tid");
      continue;
    }
    CHECK(e.at("ph") == "X");
    CHECK(e.at("dur").get<double>() >= 0);
    if (e.at("cat") == "backward") saw_backward = true;
    if (e.at("cat") == "comm") {
      ++comm_spans;
      CHECK(e.at("tid") == comm_tid);
      CHECK(e.at("dur").get<double>() == doctest::Approx(5.0));
    }
  }
  CHECK(saw_process_name);
  CHECK(comm_spans == 1);
  CHECK(saw_backward);
  profiler::reset();
  CHECK(profiler::events().empty());
}
