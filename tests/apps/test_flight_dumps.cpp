// gradring-flight's reading of dumps (apps/flight/): the analysis of a skipped all-reduce,
// and what the reader got wrong before it was fuzzed (fuzz/fuzz_flight): missing or mistyped
// fields (a failed assertion or an uncaught exception), a number no rank recorded taken for
// the first difference, ranks that disagree summarised as "no divergence", a world size of
// billions (a set of every rank: 3.4 GB and over a minute), a frame offset that is not hex
// (an uncaught std::stoull error), and addr2line run through a shell with the dump's file
// name in the command (a dump could run commands).
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "flight/flight_dumps.h"
#include "test_util.h"

using namespace gr;
using namespace gr::flight;

namespace {

// One rank's dump of group default_pg of `ranks`, with `entries` (JSON objects).
std::string dump(int rank, const std::string& entries, const std::string& ranks = "[0,1]", const std::string& top = "") {
  return R"({"format":"gradring-flight-recorder","rank":)" + std::to_string(rank) + R"(,"world_size":2,"reason":"r")" +
         top + R"(,"groups":[{"name":"default_pg","backend":"gloo","ranks":)" + ranks + R"(,"entries":[)" + entries +
         "]}]}";
}

std::string call(int64_t seq, const std::string& shape, const std::string& state = "completed",
                 const std::string& extra = "") {
  return R"({"op":"allreduce","seq":)" + std::to_string(seq) + R"(,"reduce_op":"sum","dtype":"float32","shape":)" +
         shape + R"(,"tensors":1,"state":")" + state + "\"" + extra + "}";
}

std::string calls(const std::vector<std::string>& shapes, int64_t first = 1) {
  std::string s;
  for (size_t i = 0; i < shapes.size(); ++i) s += (i ? "," : "") + call(first + static_cast<int64_t>(i), shapes[i]);
  return s;
}

std::string no_resolver(const Frame&) { return {}; }

Analysis analyze_texts(const std::vector<std::string>& texts, const FrameResolver& resolve = no_resolver) {
  Dumps d;
  for (size_t i = 0; i < texts.size(); ++i) read_dump(texts[i], "rank" + std::to_string(i) + ".json", d);
  return analyze(d, resolve);
}

}  // namespace

// A function for addr2line to find in this executable's symbol table.
extern "C" __attribute__((noinline)) int gradring_flight_test_marker(int x) { return x * 3 + 1; }

TEST_CASE("gradring-flight: the rank that skipped an all-reduce, and its call site") {
  const std::string stack = R"js(,"stack":["/lib/libgradring.so(gr::distributed::ProcessGroup::allreduce+0x10)",)js"
                            R"js("/usr/bin/train(+0x6a6c3)"])js";
  // The calls repeat with period 2 ([1000], [1]): at #5 rank 1 issues [1], the call after [1000].
  Analysis skip = analyze_texts({dump(0, calls({"[1000]", "[1]", "[1000]", "[1]", "[1000]"})),
                                 dump(1, calls({"[1000]", "[1]", "[1000]", "[1]", "[1]"}))});
  CHECK(skip.summary ==
        "rank 1 skipped allreduce (sum) float32 [1000] (its #5 is the call that comes after it) at collective #5 of "
        "group default_pg");
  CHECK(skip.report["culprit"]["ranks"] == nlohmann::json::array({1}));
  CHECK(skip.report["culprit"]["seq"] == 5);
  // Another call, with its stack: the first frame outside gradring names the call site.
  Analysis a = analyze_texts({dump(0, calls({"[1000]", "[1]", "[1000]", "[1]", "[1000]"})),
                              dump(1, calls({"[1000]", "[1]", "[1000]", "[1]"}) + "," + call(5, "[7]", "issued", stack))},
                             [](const Frame& f) { return f.file == "/usr/bin/train" ? "train_step at train.cpp:7" : ""; });
  CHECK(a.summary ==
        "rank 1 called allreduce (sum) float32 [7] where the others called allreduce (sum) float32 [1000] at "
        "collective #5 of group default_pg, called at train_step at train.cpp:7");
  CHECK(a.lines.back() == "  rank 1 #5 allreduce (sum) float32 [7]: issued, never started");
  // Two ranks alike in the calls before and a third that skipped: the minority.
  Analysis three = analyze_texts({dump(0, calls({"[4]", "[2]", "[4]"}), "[0,1,2]"),
                                  dump(1, calls({"[4]", "[2]", "[4]"}), "[0,1,2]"),
                                  dump(2, calls({"[4]", "[4]"}), "[0,1,2]")});
  CHECK(three.summary.rfind("rank 2 called allreduce (sum) float32 [4] where the others called allreduce (sum) "
                            "float32 [2] at collective #2",
                            0) == 0);
}

TEST_CASE("gradring-flight: a malformed dump is an error naming the file, the entry and the field") {
  struct Case {
    std::string text, error;
  };
  const std::vector<Case> cases = {
      {"{\"format\":", "rank0.json is not a flight recorder dump: [json.exception.parse_error"},
      {"[1,2]", "rank0.json is not a flight recorder dump (no \"format\")"},
      {R"({"format":"gradring-flight-recorder","rank":0})", "rank0.json has no \"groups\""},
      {R"({"format":"gradring-flight-recorder","groups":{}})", "rank0.json: \"groups\" is not a list"},
      {R"({"format":"gradring-flight-recorder","groups":[7]})", "rank0.json: group 0 is not a JSON object"},
      {R"({"format":"gradring-flight-recorder","groups":[{"name":"g","entries":[]}]})",
       "rank0.json: group 0 has no \"ranks\""},
      {R"({"format":"gradring-flight-recorder","groups":[{"name":"g","ranks":[0]}]})",
       "rank0.json: group 0 has no \"entries\""},
      {R"({"format":"gradring-flight-recorder","groups":[{"name":3,"ranks":[0],"entries":[]}]})",
       "rank0.json: group 0: \"name\" is not a string"},
      {dump(0, "", "[0,-1]"), "rank0.json: group 0: a member of \"ranks\" is -1, not an integer from 0 to 1048575"},
      {dump(0, "", "[0,1]", R"(,"rank":1.5)"), "\"rank\" is 1.5, not an integer"},
      {dump(0, "", "[0,1]", R"(,"world_size":2000000000)"),
       "rank0.json: \"world_size\" is 2000000000, not an integer from 0 to 1048576"},
      {dump(0, R"({"seq":"3"})"), "rank0.json: group 0 ('default_pg') entry 0: \"seq\" is \"3\", not an integer"},
      {dump(0, R"({"seq":-1})"), "entry 0: \"seq\" is -1, not an integer from 0 to"},
      {dump(0, call(1, "[1]") + "," + call(2, R"(["a"])")), "entry 1: a dimension of \"shape\" is \"a\""},
      {dump(0, R"({"seq":1,"dtype":"float32"})"), "entry 0 has no \"shape\""},
      {dump(0, R"({"seq":1,"op":["allreduce"]})"), "entry 0: \"op\" is not a string"},
      {dump(0, R"({"seq":1,"root":"0"})"), "entry 0: \"root\" is \"0\", not an integer"},
      {dump(0, call(1, "[1]", "issued", R"(,"stack":[1])")), "entry 0: a frame of \"stack\" is not a string"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.text);
    Dumps d;
    CHECK_THROWS_WITH_AS(read_dump(c.text, "rank0.json", d), doctest::Contains(c.error.c_str()), gr::Error);
  }
}

TEST_CASE("gradring-flight: sequence numbers far apart, undecided differences and a large world") {
  // The first difference is the first number a rank recorded differently, not #1, which no
  // rank holds; with two ranks and no history nothing tells which is wrong, and the summary
  // says so (it said "no divergence found").
  const int64_t far = 1'000'000'000'000'000;
  Analysis a = analyze_texts({dump(0, call(0, "[1]") + "," + call(far, "[2]", "issued")),
                              dump(1, call(0, "[1]") + "," + call(far, "[3]", "issued"))});
  CHECK(a.lines[5] == "  first difference: #1000000000000000: rank 0 called allreduce (sum) float32 [2]; rank 1 "
                      "called allreduce (sum) float32 [3]");
  CHECK(a.summary ==
        "the ranks disagree at collective #1000000000000000 of group default_pg and nothing tells which is right");
  CHECK(a.report["culprit"].is_null());
  Analysis big = analyze_texts({dump(0, call(0, "[1]"), "[0,1]", R"(,"world_size":1048576)")});
  CHECK(big.report["world_size"] == 1048576);
  CHECK(big.report["no_dump"].size() == 1048575);
}

TEST_CASE("gradring-flight: frames, and addr2line run without a shell") {
  Frame f;
  REQUIRE(parse_frame("/usr/lib/libx.so(f(int)+0x1a)", f));
  CHECK(f.file == "/usr/lib/libx.so");
  CHECK(f.function == "f(int)");
  CHECK(f.offset == 0x1a);
  REQUIRE(parse_frame("/bin/train(+0x6a6c3)", f));
  CHECK(f.function.empty());
  CHECK(f.offset == 0x6a6c3);
  CHECK_FALSE(parse_frame("/bin/train(+0xZZ)", f));  // std::stoull threw, uncaught
  CHECK_FALSE(parse_frame("/bin/train(+0x)", f));
  CHECK_FALSE(parse_frame("/bin/train(+0x123456789abcdef0123)", f));
  CHECK_FALSE(parse_frame("no frame", f));
  CHECK_FALSE(parse_frame("+0x10(x)", f));

  // The file name comes from the dump: with a shell it could run a command.
  const std::string marker = test::temp_path("gradring_flight_test", "marker");
  std::filesystem::remove(marker);
  CHECK(addr2line_resolver({"/nonexistent'; touch " + marker + "; '", "", 16}).empty());
  CHECK_FALSE(std::filesystem::exists(marker));

  if (std::system("command -v addr2line > /dev/null 2>&1") != 0) {
    MESSAGE("addr2line is not installed: frames without a name stay as recorded");
    return;
  }
  Dl_info info{};
  REQUIRE(dladdr(reinterpret_cast<void*>(&gradring_flight_test_marker), &info) != 0);
  const auto offset = reinterpret_cast<uintptr_t>(&gradring_flight_test_marker) - reinterpret_cast<uintptr_t>(info.dli_fbase);
  const std::string named = addr2line_resolver({std::filesystem::read_symlink("/proc/self/exe").string(), "", offset + 1});
  CHECK(named.rfind("gradring_flight_test_marker", 0) == 0);
}
