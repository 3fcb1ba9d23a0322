// spawn() and the launcher library in function mode: environment, captured prefixed output,
// a throwing rank's error text, signals, timeouts that kill every worker, restarts; and the
// option checks and worker environment of the library.
#include <signal.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "distributed/test_launcher_util.h"
#include "test_util.h"

using namespace gr;
using namespace gr::test;
using namespace gr::distributed;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

struct Captured {
  std::vector<std::string> out, err;
  LineSink sink() {
    return [this](int rank, Stream s, std::string_view line) {
      std::string text = (rank >= 0 ? "[rank " + std::to_string(rank) + "] " : std::string()) + std::string(line);
      (s == Stream::kStdout ? out : err).push_back(text);
    };
  }
  bool has_line(const std::string& line) const {
    return std::find(out.begin(), out.end(), line) != out.end() || std::find(err.begin(), err.end(), line) != err.end();
  }
};

long open_fd_count() {
  std::filesystem::directory_iterator fds("/proc/self/fd");
  return std::distance(std::filesystem::begin(fds), std::filesystem::end(fds));
}

// True when this process has no child left, not even an unreaped zombie.
bool no_children() {
  siginfo_t info{};
  return ::waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0 && errno == ECHILD;
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

}  // namespace

TEST_CASE("spawn runs fn(rank) in each process with the launcher's environment") {
  Captured cap;
  SpawnOptions opt;
  opt.sink = cap.sink();
  opt.env = {{"MY_SETTING", "42"}};
  opt.timeout = 30s;
  spawn(
      3,
      [](int rank) {
        if (env("RANK") != std::to_string(rank) || env("LOCAL_RANK") != std::to_string(rank) ||
            env("WORLD_SIZE") != "3" || env("MASTER_ADDR") != "127.0.0.1" || env("MY_SETTING") != "42")
          throw std::runtime_error("wrong environment in rank " + std::to_string(rank));
        std::printf("hello from %d port %s\n", rank, env("MASTER_PORT").c_str());
        std::fprintf(stderr, "to stderr %d\n", rank);
      },
      opt);
  REQUIRE(cap.out.size() == 3);
  for (int rank = 0; rank < 3; ++rank) CHECK(cap.has_line("[rank " + std::to_string(rank) + "] to stderr " +
                                                          std::to_string(rank)));
  std::string port = cap.out[0].substr(cap.out[0].rfind(' ') + 1);
  CHECK(std::stoi(port) > 0);
  CHECK(port != "29500");  // a free port, the same for every rank
  for (int rank = 0; rank < 3; ++rank) CHECK(cap.has_line("[rank " + std::to_string(rank) + "] hello from " +
                                                          std::to_string(rank) + " port " + port));
}

TEST_CASE("spawn reports a throwing rank with its error text") {
  Captured cap;
  SpawnOptions opt;
  opt.sink = cap.sink();
  opt.timeout = 30s;
  auto start = Clock::now();
  std::string msg = error_of([&] {
    spawn(
        3,
        [](int rank) {
          if (rank == 1) throw std::runtime_error("rank 1 broke: tensor sizes [2, 3] vs [3]");
          std::this_thread::sleep_for(60s);  // stopped by the launcher
        },
        opt);
  });
  CHECK(std::chrono::duration<double>(Clock::now() - start).count() < 10);
  INFO(msg);
  CHECK(has(msg, "spawn: worker failure:"));
  CHECK(has(msg, "rank 1 (local rank 1, pid "));
  CHECK(has(msg, "failed with exit code 1; its last stderr lines:\n    rank 1 broke: tensor sizes [2, 3] vs [3]"));
  CHECK_FALSE(has(msg, "rank 0 ("));
  CHECK(cap.has_line("[rank 1] rank 1 broke: tensor sizes [2, 3] vs [3]"));
}

TEST_CASE("spawn reports a signal, and a timeout kills every worker") {
  std::string msg = error_of([] {
    spawn(2, [](int rank) {
      if (rank == 1) ::raise(SIGABRT);
    });
  });
  CHECK(has(msg, "rank 1 (local rank 1, pid "));
  CHECK(has(msg, "failed with signal 6 (SIGABRT)"));

  Captured cap;
  SpawnOptions opt;
  opt.sink = cap.sink();
  opt.timeout = 500ms;
  auto start = Clock::now();
  msg = error_of([&] {
    spawn(
        2,
        [](int) {
          std::printf("ready pid=%d\n", static_cast<int>(::getpid()));
          std::this_thread::sleep_for(60s);
        },
        opt);
  });
  double took = std::chrono::duration<double>(Clock::now() - start).count();
  CHECK(has(msg, "spawn: timed out after 500 ms; ranks 0, 1 were still running and were killed"));
  CHECK(took < 5);
  std::vector<int> pids = ready_pids(cap.out);
  CHECK(pids.size() == 2);
  CHECK(all_gone(pids, 2s));
}

TEST_CASE("launch() in function mode restarts the group with a new GRADRING_RESTART_COUNT") {
  Captured cap;
  LaunchOptions opt;
  opt.nproc_per_node = 2;
  opt.max_restarts = 3;
  opt.master_port = 0;
  opt.sink = cap.sink();
  opt.forward_signals = false;
  opt.timeout = 30s;
  LaunchResult r = launch(
      [](int rank) {
        int attempt = std::atoi(std::getenv("GRADRING_RESTART_COUNT"));
        std::printf("attempt %d\n", attempt);
        if (rank == 0 && attempt < 2) throw std::runtime_error("not yet");
        if (attempt < 2) std::this_thread::sleep_for(60s);
      },
      opt);
  INFO(r.summary);
  CHECK(r.exit_code == 0);
  CHECK(r.attempts == 3);
  CHECK(cap.has_line("[rank 1] attempt 2"));
  int restarts = 0;
  for (const auto& line : cap.err) restarts += has(line, "failed with exit code 1; restarting the group");
  CHECK(restarts == 2);

  opt.max_restarts = 1;
  r = launch([](int rank) { ::_exit(rank == 1 ? 7 : 0); }, opt);
  CHECK(r.exit_code == 7);
  CHECK(r.attempts == 2);
  REQUIRE(r.failures.size() == 1);
  CHECK(r.failures[0].rank == 1);
  CHECK(has(r.summary, "worker failure after 2 attempts (max restarts 1):"));
}

TEST_CASE("launcher options are checked; worker environment follows torchrun") {
  LaunchOptions o;
  o.nproc_per_node = 0;
  CHECK(error_of([&] { validate(o); }) == "launcher: nproc_per_node must be at least 1, got 0");
  o.nproc_per_node = 2;
  o.nnodes = 2;
  o.node_rank = 2;
  CHECK(error_of([&] { validate(o); }) == "launcher: node_rank must be in [0, nnodes) = [0, 2), got 2");
  o.node_rank = 1;
  o.master_port = 70000;
  CHECK(has(error_of([&] { validate(o); }), "master_port must be in [0, 65535]"));
  o.master_port = 1234;
  o.env = {{"OMP_NUM_THREADS", "4"}, {"EXTRA", "x"}};
  EnvVars env = worker_environment(o, 1, 5);
  auto value = [&](const std::string& name) {
    std::string v = "(unset)";
    for (const auto& [k, val] : env)
      if (k == name) v = val;  // the last one wins, as in the child
    return v;
  };
  CHECK(value("RANK") == "3");
  CHECK(value("LOCAL_RANK") == "1");
  CHECK(value("WORLD_SIZE") == "4");
  CHECK(value("LOCAL_WORLD_SIZE") == "2");
  CHECK(value("GROUP_RANK") == "1");
  CHECK(value("MASTER_PORT") == "1234");
  CHECK(value("GRADRING_RESTART_COUNT") == "5");
  CHECK(value("OMP_NUM_THREADS") == "4");
  CHECK(value("EXTRA") == "x");
  CHECK(has(error_of([] { spawn(0, [](int) {}); }), "spawn: nprocs must be at least 1, got 0"));
  CHECK(has(error_of([] { launch(std::vector<std::string>{"/no/such/program"}, LaunchOptions{}); }),
            "program '/no/such/program' not found"));
}

TEST_CASE("spawn and launch leave no open descriptors and no children behind") {
  long fds = open_fd_count();
  LineSink drop = [](int, Stream, std::string_view) {};
  spawn(2, [](int) { std::printf("hi\n"); }, {.sink = drop});
  CHECK(error_of([&] { spawn(3, [](int rank) { GR_CHECK(rank != 2, "no"); }, {.sink = drop}); }) != "");
  LaunchOptions o;
  o.nproc_per_node = 2;
  o.max_restarts = 1;
  o.quiet = true;
  o.sink = drop;
  CHECK(launch(std::vector<std::string>{"/bin/sh", "-c", "sleep 0.1 & exit 1"}, o).exit_code == 1);
  CHECK(open_fd_count() == fds);
  CHECK(no_children());
}

TEST_CASE("run_command captures output and kills a command that overruns") {
  auto r = run_command({"/bin/sh", "-c", "echo out; echo err >&2; exit 4"});
  CHECK(r.out == "out\n");
  CHECK(r.err == "err\n");
  CHECK(r.status.code == 4);
  auto start = Clock::now();
  r = run_command({"/bin/sh", "-c", "sleep 30"}, {}, 200ms);
  CHECK(r.timed_out);
  CHECK(r.status.signal == SIGKILL);
  CHECK(std::chrono::duration<double>(Clock::now() - start).count() < 5);
}
