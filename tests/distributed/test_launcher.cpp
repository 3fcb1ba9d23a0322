// gradring-run end to end with the test worker: per-rank environment, argument pass-through,
// whole prefixed lines, failure stop and summary, signals, restarts, SIGTERM forwarding, no
// orphans, and its argument errors. Every run is bounded (30 s).
#include <regex>

#include "distributed/test_launcher_util.h"
#include "test_util.h"

using namespace gr;
using namespace gr::test;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Built with GRADRING_APPS=OFF there is no gradring-run to test (Note [Skips]).
#define NEEDS_RUN test::skip_unless(!kRun.empty(), "built without gradring-run (GRADRING_APPS=OFF)")

namespace {

std::string expected_omp(const char* when_unset) {
  const char* v = std::getenv("OMP_NUM_THREADS");
  return v && *v ? v : when_unset;
}

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

}  // namespace

TEST_CASE("gradring-run gives each rank its environment" * NEEDS_RUN) {
  auto r = run_launcher({"--nproc-per-node", "3", "--master-port", "29611", kWorker, "print-env"});
  CHECK(r.status.code == 0);
  std::vector<std::string> lines = split_lines(r.out);
  REQUIRE(lines.size() == 3);
  for (int rank = 0; rank < 3; ++rank) {
    std::string want = "[rank " + std::to_string(rank) + "] env RANK=" + std::to_string(rank) +
                       " LOCAL_RANK=" + std::to_string(rank) +
                       " WORLD_SIZE=3 LOCAL_WORLD_SIZE=3 GROUP_RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=29611"
                       " GRADRING_RESTART_COUNT=0 GRADRING_MAX_RESTARTS=0 OMP_NUM_THREADS=" + expected_omp("1");
    CHECK(std::count(lines.begin(), lines.end(), want) == 1);
  }

  // The second node of two: ranks 2 and 3 of 4; a user's OMP_NUM_THREADS is kept.
  r = run_launcher({"--nnodes", "2", "--node-rank", "1", "--nproc-per-node", "2", "--master-addr", "10.1.2.3",
                    "--max-restarts", "4", kWorker, "print-env"},
                   {{"OMP_NUM_THREADS", "3"}});
  CHECK(r.status.code == 0);
  CHECK(has(r.out, "[rank 3] env RANK=3 LOCAL_RANK=1 WORLD_SIZE=4 LOCAL_WORLD_SIZE=2 GROUP_RANK=1 "
                   "MASTER_ADDR=10.1.2.3 MASTER_PORT=29500 GRADRING_RESTART_COUNT=0 GRADRING_MAX_RESTARTS=4 "
                   "OMP_NUM_THREADS=3"));
  CHECK(has(r.out, "[rank 2] env RANK=2 LOCAL_RANK=0"));

  // One worker: no OMP_NUM_THREADS of ours; --standalone picks a free port.
  r = run_launcher({"--standalone", kWorker, "print-env"});
  CHECK(r.status.code == 0);
  CHECK(has(r.out, "OMP_NUM_THREADS=" + expected_omp("(unset)")));
  CHECK_FALSE(has(r.out, "MASTER_PORT=29500 "));
  CHECK(has(r.out, "MASTER_ADDR=127.0.0.1"));
}

TEST_CASE("gradring-run passes the program's arguments through untouched" * NEEDS_RUN) {
  auto r = run_launcher({"--nproc-per-node", "1", kWorker, "echo", "--nproc-per-node", "7", "-x", "--", "two words"});
  CHECK(r.status.code == 0);
  CHECK(r.out == "[rank 0] arg --nproc-per-node\n[rank 0] arg 7\n[rank 0] arg -x\n[rank 0] arg --\n"
                 "[rank 0] arg two words\n");
}

TEST_CASE("gradring-run forwards whole lines with the rank prefix" * NEEDS_RUN) {
  const int n = 3000;
  auto r = run_launcher({"--nproc-per-node", "3", kWorker, "spam", std::to_string(n)});
  CHECK(r.status.code == 0);
  std::regex out_line(R"(\[rank (\d)\] out (\d) \d+ x{300} end)"), err_line(R"(\[rank (\d)\] err (\d) \d+ x{300} end)");
  int counts[3] = {0, 0, 0}, partial[3] = {0, 0, 0}, bad = 0;
  for (const std::string& line : split_lines(r.out)) {
    std::smatch m;
    if (std::regex_match(line, m, out_line) && m[1] == m[2]) {
      ++counts[std::stoi(m[1])];
    } else if (line.size() == 18 && line.compare(0, 6, "[rank ") == 0 && has(line, "partial")) {
      ++partial[line[6] - '0'];
    } else {
      ++bad;
    }
  }
  CHECK(bad == 0);
  for (int rank = 0; rank < 3; ++rank) {
    CHECK(counts[rank] == n);
    CHECK(partial[rank] == 1);
  }
  int err_ok = 0, err_bad = 0;
  for (const std::string& line : split_lines(r.err)) {
    std::smatch m;
    if (std::regex_match(line, m, err_line) && m[1] == m[2]) {
      ++err_ok;
    } else if (line.rfind("gradring-run: ", 0) != 0) {
      ++err_bad;
    }
  }
  CHECK(err_ok == 3 * n);
  CHECK(err_bad == 0);
}

TEST_CASE("a failing worker stops the others; the launcher exits with its code and a summary" * NEEDS_RUN) {
  auto start = Clock::now();
  auto r = run_launcher({"--nproc-per-node", "3", kWorker, "fail-rank", "1", "3"});
  double took = seconds_since(start);
  CHECK(r.status.code == 3);
  CHECK(took < 10);  // the other ranks would sleep 60 s
  CHECK(has(r.err, "gradring-run: worker failure:"));
  CHECK(has(r.err, "gradring-run:   rank 1 (local rank 1, pid "));
  CHECK(has(r.err, ") failed with exit code 3; its last stderr lines:"));
  CHECK(has(r.err, "[rank 1] rank 1 giving up with code 3"));  // the partial last line, flushed
  CHECK(has(r.err, "gradring-run:     rank 1 giving up with code 3"));
  CHECK(has(r.err, "gradring-run:     rank 1 error line 6"));
  CHECK_FALSE(has(r.err, "gradring-run:     rank 1 error line 5"));  // only the last 10 lines
  std::vector<int> pids = ready_pids(split_lines(r.out));
  CHECK(pids.size() == 3);
  CHECK(all_gone(pids, 2s));
  MESSAGE("launcher stopped the group and exited after " << took << " s");
}

TEST_CASE("a worker killed by a signal is reported with the signal's name" * NEEDS_RUN) {
  auto r = run_launcher({"--nproc-per-node", "2", kWorker, "kill-rank", "0", std::to_string(SIGSEGV)});
  CHECK(r.status.code == 128 + SIGSEGV);
  CHECK(has(r.err, "rank 0 (local rank 0, pid "));
  CHECK(has(r.err, "failed with signal 11 (SIGSEGV)"));
}

TEST_CASE("--max-restarts restarts the whole group; the second attempt succeeds" * NEEDS_RUN) {
  auto r = run_launcher({"--nproc-per-node", "2", "--max-restarts", "2", kWorker, "fail-once", "1", "5"});
  CHECK(r.status.code == 0);
  // (Whether rank 0 prints "attempt 0" before rank 1's failure stops it is a race: not checked.)
  CHECK(has(r.out, "[rank 0] attempt 1"));
  CHECK(has(r.out, "[rank 1] attempt 1"));
  CHECK_FALSE(has(r.out, "attempt 2"));
  CHECK(has(r.err, "gradring-run: rank 1 (local rank 1, pid "));
  CHECK(has(r.err, "failed with exit code 5; restarting the group (restart 1 of 2)"));

  r = run_launcher({"--nproc-per-node", "2", kWorker, "fail-once", "1", "5"});  // no restarts
  CHECK(r.status.code == 5);
  CHECK(has(r.err, "rank 1 fails on attempt 0"));
}

TEST_CASE("SIGTERM to gradring-run is forwarded and stops every worker" * NEEDS_RUN) {
  BackgroundLauncher run({"--nproc-per-node", "2", kWorker, "sleep", "60"});
  REQUIRE(run.wait_for([&] { return ready_pids(run.lines).size() == 2; }, 10s));
  auto start = Clock::now();
  ::kill(run.process.pid(), SIGTERM);
  distributed::ExitStatus st = run.wait_exit(10s);
  CHECK(st.exited);
  CHECK(st.code == 128 + SIGTERM);
  CHECK(seconds_since(start) < 5);
  CHECK(all_gone(ready_pids(run.lines), 2s));
  std::string err;
  for (const auto& line : run.err_lines) err += line + "\n";
  CHECK(has(err, "gradring-run: received SIGTERM; forwarded it to the workers (stopped ranks 0, 1)"));
}

TEST_CASE("workers that ignore SIGTERM are killed after the grace period" * NEEDS_RUN) {
  BackgroundLauncher run({"--nproc-per-node", "2", "--grace-period", "0.5", kWorker, "ignore-term", "60"});
  REQUIRE(run.wait_for([&] { return ready_pids(run.lines).size() == 2; }, 10s));
  auto start = Clock::now();
  ::kill(run.process.pid(), SIGTERM);
  distributed::ExitStatus st = run.wait_exit(10s);
  CHECK(st.code == 128 + SIGTERM);
  double took = seconds_since(start);
  CHECK(took >= 0.4);
  CHECK(took < 4);
  CHECK(all_gone(ready_pids(run.lines), 2s));
}

TEST_CASE("workers die with a launcher that is killed (no orphans)" * NEEDS_RUN) {
  BackgroundLauncher run({"--nproc-per-node", "2", kWorker, "sleep", "60"});
  REQUIRE(run.wait_for([&] { return ready_pids(run.lines).size() == 2; }, 10s));
  ::kill(run.process.pid(), SIGKILL);
  CHECK(run.wait_exit(10s).signal == SIGKILL);
  CHECK(all_gone(ready_pids(run.lines), 5s));
}

TEST_CASE("gradring-run rejects bad arguments with clear messages" * NEEDS_RUN) {
  auto fails = [](std::vector<std::string> args, const std::string& message) {
    auto r = run_launcher(std::move(args));
    CHECK(r.status.code != 0);
    INFO(r.err);
    CHECK(has(r.err, message));
  };
  fails({}, "no program given");
  fails({"--nproc-per-node", "2"}, "no program given");
  fails({"--nproc-per-node", "0", kWorker}, "--nproc-per-node must be a positive number or 'auto', got '0'");
  fails({"--nproc-per-node", "two", kWorker}, "got 'two'");
  fails({"--nnodes", "2", "--node-rank", "2", kWorker}, "--node-rank 2 must be less than --nnodes 2");
  fails({"--nnodes", "0", kWorker}, "must be a positive number, got 0");
  fails({"--max-restarts", "-1", kWorker}, "must be zero or more, got -1");
  fails({"--master-port", "70000", kWorker}, "--master-port");
  fails({"--standalone", "--nnodes", "2", kWorker}, "--standalone is for one node");
  fails({"/nonexistent/program"}, "program '/nonexistent/program' not found");
  fails({"no-such-program-gradring"}, "program 'no-such-program-gradring' not found in PATH");
  fails({std::string(GRADRING_TEST_DATA)}, "is not an executable file");
  fails({"--bogus", kWorker}, "unknown option '--bogus'");
  auto r = run_launcher({"--nproc-per-node", "auto", kWorker, "print-env"});
  CHECK(r.status.code == 0);
  CHECK(has(r.out, "[rank 0] env RANK=0"));
}
