// GRADRING_DISTRIBUTED_DEBUG: level parsing, and DETAIL's DebugProcessGroup on spawned Gloo
// ranks: matching collectives give the right results; mismatched shapes, ops, dtypes and
// roots make every rank throw a gr::Error naming each rank's call; a rank that skips a
// collective makes the others fail within the timeout. Checks inside ranks use GR_CHECK
// (a failed one fails spawn).
#include <chrono>
#include <cstdlib>
#include <optional>
#include <thread>

#include "collective_checks.h"
#include "distributed/backends/init.h"
#include "distributed/launch/launcher.h"
#include "distributed/backends/process_group_debug.h"
#include "test_util.h"

using namespace gr;
using namespace gr::distributed;
using namespace std::chrono_literals;

namespace {

constexpr const char* kVar = "GRADRING_DISTRIBUTED_DEBUG";

// Inside a spawned rank: the default Gloo group under `level`.
ProcessGroupPtr init_with(const char* level, std::chrono::milliseconds timeout = 30s) {
  ::setenv(kVar, level, 1);
  InitOptions o;
  o.backend = "gloo";
  o.timeout = timeout;
  return init_process_group(o);
}

void expect_contains(const std::string& message, const std::string& part, int rank) {
  GR_CHECK(message.find(part) != std::string::npos, "rank ", rank, ": the error should contain '", part, "', got: '",
           message, "'");
}

// A one-rank group whose collectives finish at once (allgather copies its input), counting
// the calls that reach it.
class FakeGroup : public ProcessGroup {
 public:
  FakeGroup() : ProcessGroup(0, 1) {}
  std::string backend_name() const override { return "fake"; }
  WorkPtr do_allreduce(Tensor&, ReduceOp, const CallInfo&) override { return done("allreduce"); }
  WorkPtr do_broadcast(Tensor&, int, const CallInfo&) override { return done("broadcast"); }
  WorkPtr do_allgather(std::vector<Tensor>& outputs, const Tensor& input, const CallInfo&) override {
    outputs[0].copy_(input);
    return done("allgather");
  }
  WorkPtr do_reduce_scatter(Tensor&, const std::vector<Tensor>&, ReduceOp, const CallInfo&) override {
    return done("reduce_scatter");
  }
  WorkPtr do_reduce(Tensor&, int, ReduceOp, const CallInfo&) override { return done("reduce"); }
  WorkPtr do_barrier(const CallInfo&) override { return done("barrier"); }
  WorkPtr do_send(const Tensor&, int, int, const CallInfo&) override { return done("send"); }
  WorkPtr do_recv(Tensor&, int, int, const CallInfo&) override { return done("recv"); }
  std::vector<std::string> calls;

 private:
  WorkPtr done(const char* op) {
    calls.push_back(op);
    auto w = std::make_shared<Work>(op);
    w->finish();
    return w;
  }
};

// After a detected mismatch no rank issued the real collective, so the group still works.
void expect_group_usable(ProcessGroup& pg) {
  Tensor x = full({3}, pg.rank() + 1.0, kFloat32);
  pg.allreduce(x)->wait(20s);
  const double want = pg.size() * (pg.size() + 1) / 2.0;
  GR_CHECK(x[0].item<double>() == want, "rank ", pg.rank(), ": all-reduce after the mismatch gave ",
           x[0].item<double>(), ", want ", want);
}

}  // namespace

TEST_CASE("debug_level parses GRADRING_DISTRIBUTED_DEBUG case-insensitively and rejects other values") {
  {
    gr::test::EnvGuard g(kVar, std::nullopt);
    CHECK(debug_level() == DebugLevel::Off);
  }
  for (auto [value, want] : {std::pair{"", DebugLevel::Off}, {"OFF", DebugLevel::Off}, {"off", DebugLevel::Off},
                             {"INFO", DebugLevel::Info}, {"Info", DebugLevel::Info}, {"DETAIL", DebugLevel::Detail},
                             {"detail", DebugLevel::Detail}}) {
    CAPTURE(value);
    gr::test::EnvGuard g(kVar, std::string(value));
    CHECK(debug_level() == want);
  }
  CHECK(std::string(debug_level_name(DebugLevel::Detail)) == "DETAIL");
  for (const char* bad : {"verbose", "2", "DETAILS", " detail"}) {
    CAPTURE(bad);
    gr::test::EnvGuard g(kVar, std::string(bad));
    std::string message = gr::test::error_of([] { debug_level(); });
    CHECK(message.find(std::string("GRADRING_DISTRIBUTED_DEBUG='") + bad + "'") != std::string::npos);
    CHECK(message.find("OFF, INFO or DETAIL") != std::string::npos);
  }
}

TEST_CASE("DETAIL wraps a group (null stays null), OFF and INFO do not; the wrapper checks, then forwards") {
  auto fake = std::make_shared<FakeGroup>();
  for (const char* level : {"OFF", "info"}) {
    gr::test::EnvGuard g(kVar, std::string(level));
    CHECK(wrap_for_debug(fake) == fake);
  }
  gr::test::EnvGuard g(kVar, std::string("Detail"));
  CHECK(wrap_for_debug(nullptr) == nullptr);
  ProcessGroupPtr pg = wrap_for_debug(fake);
  REQUIRE(dynamic_cast<DebugProcessGroup*>(pg.get()) != nullptr);
  CHECK(pg->backend_name() == "fake");
  CHECK(pg->timeout() == fake->timeout());
  pg->set_timeout(5s);  // reaches the wrapped group at the next call
  Tensor x = ones({4});
  pg->allreduce(x)->wait();
  CHECK(fake->timeout() == 5s);
  pg->send(x, 0)->wait();  // point to point: passed through, no check
  pg->barrier()->wait();
  CHECK(fake->calls == std::vector<std::string>{"allgather", "allreduce", "send", "allgather", "barrier"});
  // Local argument errors are raised before any check is sent.
  CHECK(gr::test::error_of([&] { pg->broadcast(x, 3); }).find("root 3 is not a rank") != std::string::npos);
  CHECK(fake->calls.size() == 5);
}

TEST_CASE("a bad GRADRING_DISTRIBUTED_DEBUG value makes init_process_group fail before the rendezvous") {
  gr::test::EnvGuard g(kVar, std::string("loud"));
  InitOptions o;
  o.backend = "gloo";
  o.rank = 0;
  o.world_size = 2;  // nobody else comes: a rendezvous would wait for the timeout
  o.timeout = 5s;
  std::string message = gr::test::error_of([&] { init_process_group(o); });
  CHECK(message.find("GRADRING_DISTRIBUTED_DEBUG='loud' is not a debug level: use OFF, INFO or DETAIL") !=
        std::string::npos);
  CHECK_FALSE(is_initialized());
}

TEST_CASE("DETAIL: matching collectives pass and give the right results on 2 ranks") {
  spawn(2, [](int rank) {
    ProcessGroupPtr pg = init_with("detail");
    GR_CHECK(dynamic_cast<DebugProcessGroup*>(pg.get()) != nullptr, "DETAIL should wrap the default group");
    GR_CHECK(pg->backend_name() == "gloo" && pg->rank() == rank && pg->size() == 2 && pg->timeout() == 30s,
             "the wrapper should look like the wrapped group");
    gr::test::check_collectives(*pg);  // every collective, send/recv (passed through) included
    ProcessGroupPtr sub = new_group({0, 1});
    GR_CHECK(dynamic_cast<DebugProcessGroup*>(sub.get()) != nullptr, "DETAIL should wrap new_group's groups");
    expect_group_usable(*sub);
    destroy_process_group();
  }, {.timeout = 120s});
}

TEST_CASE("DETAIL: an all-reduce of different sizes fails on every rank, naming both shapes") {
  spawn(2, [](int rank) {
    ProcessGroupPtr pg = init_with("DETAIL");
    pg->barrier()->wait(20s);  // collective #0; the mismatch is #1
    Tensor x = ones({rank == 0 ? 1000 : 999}, kFloat32);
    std::string message = gr::test::error_of([&] { pg->allreduce(x)->wait(20s); });
    expect_contains(message, "GRADRING_DISTRIBUTED_DEBUG=DETAIL: collective #1 differs across ranks", rank);
    expect_contains(message, "rank 0 called allreduce(sum) float32 [1000]", rank);
    expect_contains(message, "rank 1 called allreduce(sum) float32 [999]", rank);
    GR_CHECK(x[0].item<double>() == 1.0, "rank ", rank, ": the mismatched all-reduce must not have run");
    expect_group_usable(*pg);
    destroy_process_group();
  }, {.timeout = 120s});
}

TEST_CASE("DETAIL: broadcast on one rank and all-reduce on the other fail on both, naming both calls") {
  spawn(2, [](int rank) {
    ProcessGroupPtr pg = init_with("DETAIL");
    Tensor x = full({2, 3}, rank + 1.0, kFloat64);
    std::string message = gr::test::error_of([&] {
      (rank == 0 ? pg->broadcast(x, 0) : pg->allreduce(x, ReduceOp::Max))->wait(20s);
    });
    expect_contains(message, "collective #0 differs across ranks", rank);
    expect_contains(message, "rank 0 called broadcast(root=0) float64 [2, 3]", rank);
    expect_contains(message, "rank 1 called allreduce(max) float64 [2, 3]", rank);
    expect_group_usable(*pg);
    destroy_process_group();
  }, {.timeout = 120s});
}

TEST_CASE("DETAIL: different dtypes fail on every rank, naming both dtypes") {
  spawn(2, [](int rank) {
    ProcessGroupPtr pg = init_with("DETAIL");
    std::vector<Tensor> outs;
    for (int k = 0; k < 2; ++k) outs.push_back(empty({4}, rank == 0 ? kFloat32 : kInt64));
    Tensor in = zeros({4}, rank == 0 ? kFloat32 : kInt64);
    std::string message = gr::test::error_of([&] { pg->allgather(outs, in)->wait(20s); });
    expect_contains(message, "rank 0 called allgather float32 [4] into 2 tensors", rank);
    expect_contains(message, "rank 1 called allgather int64 [4] into 2 tensors", rank);
    expect_group_usable(*pg);
    destroy_process_group();
  }, {.timeout = 120s});
}

TEST_CASE("DETAIL: a different broadcast root on one of 3 ranks groups the ranks that agree") {
  spawn(3, [](int rank) {
    ProcessGroupPtr pg = init_with("DETAIL");
    Tensor x = zeros({5}, kFloat32);
    std::string message = gr::test::error_of([&] { pg->broadcast(x, rank == 1 ? 1 : 0)->wait(20s); });
    expect_contains(message, "ranks 0, 2 called broadcast(root=0) float32 [5], rank 1 called broadcast(root=1) "
                             "float32 [5]", rank);
    expect_group_usable(*pg);
    destroy_process_group();
  }, {.timeout = 120s});
}

TEST_CASE("DETAIL: a rank that skips a collective makes the other fail within the timeout") {
  spawn(2, [](int rank) {
    ProcessGroupPtr pg = init_with("DETAIL", 3s);
    if (rank == 0) {
      auto start = std::chrono::steady_clock::now();
      Tensor x = ones({8}, kFloat32);
      std::string message = gr::test::error_of([&] { pg->allreduce(x)->wait(); });
      double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      expect_contains(message, "GRADRING_DISTRIBUTED_DEBUG=DETAIL: rank 0 could not check collective #0 "
                               "(allreduce(sum) float32 [8])", rank);
      GR_CHECK(seconds < 20, "rank 0 waited ", seconds, " s, longer than the 3 s timeout allows");
    } else {
      std::this_thread::sleep_for(6s);  // stays alive, issuing nothing, past rank 0's timeout
    }
    destroy_process_group();
  }, {.timeout = 60s});
}
