// The launcher's policy: start the local group, watch it every monitor interval, stop it
// (SIGTERM, grace period, SIGKILL) when a worker fails, a signal arrives or time runs out,
// restart it while restarts remain, and summarise the failure. See Note [Static rendezvous
// and restarts] in launcher.h.
#include "distributed/launch/launcher.h"

#include <signal.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>

#include "core/error.h"
#include "core/parallel.h"
#include "distributed/store/net_util.h"
#include "distributed/store/rank_list.h"

namespace gr::distributed {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// How long a failed group's workers get to write their flight recorder dumps.
constexpr milliseconds kFlightDumpWait{3000};

volatile sig_atomic_t g_signal = 0;
void on_launcher_signal(int sig) { g_signal = sig; }

// Catches SIGINT/SIGTERM while a launch runs (no SA_RESTART: poll wakes up at once), and
// restores the previous handlers afterwards.
class SignalForwarding {
 public:
  explicit SignalForwarding(bool enable) : enabled_(enable) {
    g_signal = 0;
    if (!enabled_) return;
    struct sigaction sa {};
    sa.sa_handler = on_launcher_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~SignalForwarding() {
    if (!enabled_) return;
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  SignalForwarding(const SignalForwarding&) = delete;
  SignalForwarding& operator=(const SignalForwarding&) = delete;

 private:
  bool enabled_;
  struct sigaction old_int_ {}, old_term_ {};
};

struct Worker {
  int rank;
  int local_rank;
  Process process;
};

using SpecMaker = std::function<ProcessSpec(int rank, EnvVars env)>;

bool env_set(const char* name) {
  const char* v = std::getenv(name);
  return v && *v;
}

class GroupRunner {
 public:
  GroupRunner(LaunchOptions options, SpecMaker make_spec) : opt_(std::move(options)), make_spec_(std::move(make_spec)) {
    if (!opt_.sink) opt_.sink = prefixing_sink();
    if (opt_.timeout.count() > 0) deadline_ = Clock::now() + opt_.timeout;
  }

  LaunchResult run() {
    SignalForwarding signals(opt_.forward_signals);
    LaunchResult result;
    if (opt_.nproc_per_node > 1 && !env_set("OMP_NUM_THREADS"))
      say("setting OMP_NUM_THREADS=1 for each of the " + std::to_string(opt_.nproc_per_node) +
          " workers on this node (set it to choose another value)");
    for (int restart = 0;; ++restart) {
      result.attempts = restart + 1;
      result.failures.clear();
      result.exit_code = 0;
      Outcome outcome = run_attempt(restart, result);
      if (outcome == Outcome::kSuccess) return result;
      if (outcome == Outcome::kFailure && restart < opt_.max_restarts && !expired()) {
        say(describe_first_failure(result) + "; restarting the group (restart " + std::to_string(restart + 1) +
            " of " + std::to_string(opt_.max_restarts) + ")");
        continue;
      }
      if (outcome == Outcome::kFailure) result.summary = failure_summary(result);
      if (!result.summary.empty()) say(result.summary);
      return result;
    }
  }

 private:
  enum class Outcome { kSuccess, kFailure, kSignal, kTimeout };

  bool expired() const { return deadline_ && Clock::now() >= *deadline_; }

  void say(const std::string& text) {
    if (opt_.quiet) return;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) opt_.sink(-1, Stream::kStderr, opt_.name + ": " + line);
  }

  Outcome run_attempt(int restart, LaunchResult& result) {
    OutputForwarder out(opt_.sink, opt_.summary_lines);
    std::vector<Worker> workers;
    for (int local = 0; local < opt_.nproc_per_node; ++local) {
      int rank = opt_.node_rank * opt_.nproc_per_node + local;
      ProcessSpec spec = make_spec_(rank, worker_environment(opt_, local, restart));
      spec.close_fds = out.open_fds();
      workers.push_back({rank, local, Process(spec)});
      auto [out_fd, err_fd] = workers.back().process.release_pipes();
      out.add(rank, out_fd, err_fd);
    }
    while (true) {
      out.pump(opt_.monitor_interval);
      if (int sig = g_signal) {
        g_signal = 0;
        return interrupted(sig, stop(workers, out, sig), result);
      }
      if (expired()) {
        request_flight_dumps(workers, out);
        std::vector<int> running = stop(workers, out, SIGTERM);
        result.timed_out = true;
        result.exit_code = 124;
        result.summary = "timed out after " + std::to_string(opt_.timeout.count()) + " ms" +
                         (running.empty() ? "" : "; " + rank_list(running) + (running.size() == 1 ? " was still running and was killed" : " were still running and were killed"));
        return Outcome::kTimeout;
      }
      bool all_done = true;
      for (Worker& w : workers) {
        ExitStatus st = w.process.poll();
        all_done = all_done && st.exited;
        if (st.exited && !st.success()) result.failures.push_back({w.rank, w.local_rank, w.process.pid(), st, {}});
      }
      if (!result.failures.empty()) {
        request_flight_dumps(workers, out);
        std::vector<int> running = stop(workers, out, SIGTERM);
        if (int sig = signal_while_stopping_) return interrupted(sig, running, result);  // no restart
        for (WorkerFailure& f : result.failures) f.last_stderr = out.last_stderr(f.rank);
        result.exit_code = result.failures.front().status.code;
        return Outcome::kFailure;
      }
      if (all_done) {
        finish(workers, out);
        return Outcome::kSuccess;
      }
    }
  }

  Outcome interrupted(int sig, const std::vector<int>& running, LaunchResult& result) {
    result.interrupted_by = sig;
    result.exit_code = 128 + sig;
    result.summary = "received " + signal_name(sig) + "; forwarded it to the workers" +
                     (running.empty() ? "" : " (stopped " + rank_list(running) + ")");
    return Outcome::kSignal;
  }

  // Before a failed or timed-out group is stopped, the workers still running are asked for
  // their flight recorder dumps (SIGUSR1; see distributed/backends/flight_recorder.h) when
  // GRADRING_FLIGHT_RECORDER_DIR is set for them, and given up to kFlightDumpWait to write
  // them: until each one's dir/rank<R>.json is newer than the request.
  void request_flight_dumps(std::vector<Worker>& workers, OutputForwarder& out) {
    const std::string dir = flight_recorder_dir();
    if (dir.empty()) return;
    // Less a little: file times come from a coarse clock that may lag this one.
    const auto asked = std::filesystem::file_time_type::clock::now() - milliseconds(20);
    std::vector<Worker*> asked_workers;
    for (Worker& w : workers) {
      if (w.process.poll().exited) continue;
      kill(w.process.pid(), SIGUSR1);
      asked_workers.push_back(&w);
    }
    if (asked_workers.empty()) return;
    say("asked " + rank_list(ranks_of(asked_workers)) + " for their flight recorder dumps (" + dir + ")");
    const auto end = Clock::now() + kFlightDumpWait;
    while (Clock::now() < end && !g_signal) {
      bool all = true;
      for (Worker* w : asked_workers) {
        // The dump file's name, as flight_dump_path() in distributed/backends/flight_recorder.cpp makes it.
        std::error_code ec;
        const auto written = std::filesystem::last_write_time(dir + "/rank" + std::to_string(w->rank) + ".json", ec);
        all = all && (w->process.poll().exited || (!ec && written >= asked));
      }
      if (all) break;
      out.pump(milliseconds(20));
    }
  }

  std::string flight_recorder_dir() const {
    std::string dir;
    if (const char* v = std::getenv("GRADRING_FLIGHT_RECORDER_DIR")) dir = v;
    for (const auto& [k, v] : opt_.env)
      if (k == "GRADRING_FLIGHT_RECORDER_DIR") dir = v;
    return dir;
  }

  static std::vector<int> ranks_of(const std::vector<Worker*>& workers) {
    std::vector<int> ranks;
    for (const Worker* w : workers) ranks.push_back(w->rank);
    return ranks;
  }

  // Sends `sig` to every running worker's group and waits up to the grace period (a second
  // signal to the launcher cuts that short and is remembered), then SIGKILLs what is left,
  // including leftover members of the groups of workers that already exited. Returns the
  // ranks signalled.
  std::vector<int> stop(std::vector<Worker>& workers, OutputForwarder& out, int sig) {
    std::vector<int> running;
    for (Worker& w : workers) {
      if (w.process.poll().exited) continue;
      running.push_back(w.rank);
      w.process.signal_group(sig);
    }
    auto grace_end = Clock::now() + opt_.grace_period;
    while (!all_exited(workers) && Clock::now() < grace_end && !g_signal) out.pump(milliseconds(20));
    if (g_signal) signal_while_stopping_ = g_signal;
    g_signal = 0;
    finish(workers, out);
    return running;
  }

  // SIGKILL to every group (stragglers, and leftover members of the groups of workers that
  // exited), a bounded wait, the last output (pipes close once the groups are gone), reaping.
  void finish(std::vector<Worker>& workers, OutputForwarder& out) {
    for (Worker& w : workers) w.process.signal_group(SIGKILL);
    auto kill_end = Clock::now() + std::chrono::seconds(5);
    while (!all_exited(workers) && Clock::now() < kill_end) out.pump(milliseconds(10));
    out.drain(milliseconds(1000));
    for (Worker& w : workers) w.process.reap();
  }

  static bool all_exited(std::vector<Worker>& workers) {
    for (Worker& w : workers)
      if (!w.process.poll().exited) return false;
    return true;
  }

  std::string describe_failure(const WorkerFailure& f) const {
    return "rank " + std::to_string(f.rank) + " (local rank " + std::to_string(f.local_rank) + ", pid " +
           std::to_string(f.pid) + ") failed with " + f.status.describe();
  }

  std::string describe_first_failure(const LaunchResult& r) const { return describe_failure(r.failures.front()); }

  std::string failure_summary(const LaunchResult& r) const {
    std::string s = "worker failure";
    if (opt_.nnodes > 1) s += " on node " + std::to_string(opt_.node_rank);
    if (opt_.max_restarts > 0)
      s += " after " + std::to_string(r.attempts) + " attempts (max restarts " + std::to_string(opt_.max_restarts) + ")";
    s += ":";
    for (const WorkerFailure& f : r.failures) {
      s += "\n  " + describe_failure(f);
      if (f.last_stderr.empty()) {
        s += "; no stderr output";
        continue;
      }
      s += "; its last stderr lines:";
      for (const std::string& line : f.last_stderr) s += "\n    " + line;
    }
    return s;
  }

  LaunchOptions opt_;
  SpecMaker make_spec_;
  std::optional<Clock::time_point> deadline_;
  int signal_while_stopping_ = 0;  // a SIGINT/SIGTERM that cut a stop short
};

LaunchOptions resolved(LaunchOptions options) {
  validate(options);
  if (options.master_port == 0) options.master_port = find_free_port();
  return options;
}

}  // namespace

void validate(const LaunchOptions& o) {
  GR_CHECK(o.nproc_per_node >= 1, "launcher: nproc_per_node must be at least 1, got ", o.nproc_per_node);
  GR_CHECK(o.nnodes >= 1, "launcher: nnodes must be at least 1, got ", o.nnodes);
  GR_CHECK(o.node_rank >= 0 && o.node_rank < o.nnodes, "launcher: node_rank must be in [0, nnodes) = [0, ", o.nnodes,
           "), got ", o.node_rank);
  GR_CHECK(o.max_restarts >= 0, "launcher: max_restarts must be zero or more, got ", o.max_restarts);
  GR_CHECK(o.master_port >= 0 && o.master_port <= 65535, "launcher: master_port must be in [0, 65535], got ",
           o.master_port);
  GR_CHECK(!o.master_addr.empty(), "launcher: master_addr is empty");
  GR_CHECK(o.monitor_interval.count() > 0, "launcher: monitor_interval must be positive");
  GR_CHECK(o.grace_period.count() >= 0, "launcher: grace_period must be zero or more");
}

EnvVars worker_environment(const LaunchOptions& o, int local_rank, int restart_count) {
  EnvVars env = {
      {"RANK", std::to_string(o.node_rank * o.nproc_per_node + local_rank)},
      {"LOCAL_RANK", std::to_string(local_rank)},
      {"WORLD_SIZE", std::to_string(o.nnodes * o.nproc_per_node)},
      {"LOCAL_WORLD_SIZE", std::to_string(o.nproc_per_node)},
      {"GROUP_RANK", std::to_string(o.node_rank)},
      {"MASTER_ADDR", o.master_addr},
      {"MASTER_PORT", std::to_string(o.master_port)},
      {"GRADRING_RESTART_COUNT", std::to_string(restart_count)},
      {"GRADRING_MAX_RESTARTS", std::to_string(o.max_restarts)},
  };
  bool user_omp = env_set("OMP_NUM_THREADS");
  for (const auto& [k, v] : o.env) user_omp = user_omp || k == "OMP_NUM_THREADS";
  if (o.nproc_per_node > 1 && !user_omp) env.emplace_back("OMP_NUM_THREADS", "1");
  for (const auto& kv : o.env) env.push_back(kv);  // later entries win
  return env;
}

LaunchResult launch(const std::vector<std::string>& command, const LaunchOptions& options) {
  GR_CHECK(!command.empty(), "launcher: no program to run");
  find_executable(command[0]);  // a clear error before anything starts
  return GroupRunner(resolved(options), [command](int, EnvVars env) {
           return ProcessSpec{command, {}, std::move(env), {}};
         }).run();
}

LaunchResult launch(const std::function<void(int rank)>& fn, const LaunchOptions& options) {
  GR_CHECK(fn != nullptr, "launcher: no function to run");
  return GroupRunner(resolved(options), [fn](int rank, EnvVars env) {
           // A forked child cannot use the parent's OpenMP pool (libgomp hangs): one thread.
           return ProcessSpec{{}, [fn, rank] {
                                set_num_threads(1);
                                fn(rank);
                              },
                              std::move(env), {}};
         }).run();
}

void spawn(int nprocs, const std::function<void(int rank)>& fn, const SpawnOptions& options) {
  GR_CHECK(nprocs >= 1, "spawn: nprocs must be at least 1, got ", nprocs);
  LaunchOptions o;
  o.nproc_per_node = nprocs;
  o.master_addr = options.master_addr;
  o.master_port = options.master_port;
  o.timeout = options.timeout;
  o.grace_period = options.grace_period;
  o.env = options.env;
  o.sink = options.sink;
  o.forward_signals = false;
  o.quiet = true;
  o.name = "spawn";
  LaunchResult r = launch(fn, o);
  if (r.exit_code != 0) GR_ERROR("spawn: ", r.summary);
}

}  // namespace gr::distributed
