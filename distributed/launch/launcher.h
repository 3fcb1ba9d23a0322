// The launcher library behind apps/gradring-run (like torchrun) and spawn() (like
// torch.multiprocessing.spawn): starts this node's workers with the rendezvous environment,
// forwards their output line by line with a "[rank N] " prefix, watches them, stops the
// group when one fails and restarts it while restarts remain.
//
// Note [Static rendezvous and restarts]
// Every node runs its own launcher with the same master address/port and its own node
// rank; the launchers do not talk to each other. rank = node_rank * nproc_per_node +
// local_rank, world size = nnodes * nproc_per_node. Restarts are per node: when a worker
// fails on one node its launcher restarts the local group; the workers on the other nodes
// then see their collectives or store requests fail, exit with errors, and their launchers
// restart their groups too (each node needs the same --max-restarts). The attempts meet
// again at the same master address; workers should use GRADRING_RESTART_COUNT as a key
// prefix in the store ("attempt3/...") so a new attempt never reads an old attempt's keys,
// and resume from their latest snapshot.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "distributed/launch/launcher_output.h"
#include "distributed/launch/process.h"

namespace gr::distributed {

constexpr int kDefaultMasterPort = 29500;

struct LaunchOptions {
  int nproc_per_node = 1;
  int nnodes = 1;
  int node_rank = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = kDefaultMasterPort;  // 0: a free local port, chosen once (--standalone)
  int max_restarts = 0;
  std::chrono::milliseconds monitor_interval{100};
  // After SIGTERM (or a forwarded signal), how long workers get before SIGKILL.
  std::chrono::milliseconds grace_period{5000};
  // The whole run, restarts included; 0 means no limit.
  std::chrono::milliseconds timeout{0};
  // Extra variables for every worker (override the launcher's environment).
  EnvVars env;
  // Forward SIGINT/SIGTERM received by this process to the workers while launch() runs.
  bool forward_signals = true;
  LineSink sink;                      // empty: prefixing_sink() on this process's stdout/stderr
  std::string name = "gradring-run";  // starts the launcher's own messages
  bool quiet = false;                 // no launcher messages at all; the summary is only returned
  size_t summary_lines = 10;          // stderr lines of a failed rank in the summary
};

struct WorkerFailure {
  int rank = 0;
  int local_rank = 0;
  int pid = 0;
  ExitStatus status;
  std::vector<std::string> last_stderr;
};

struct LaunchResult {
  int exit_code = 0;        // 0, the first failed worker's code (128 + signal), or 128 + a
                            // forwarded signal, or 124 after the timeout
  int attempts = 0;         // groups started (1 + restarts used)
  bool timed_out = false;
  int interrupted_by = 0;   // the signal received and forwarded, 0 if none
  std::vector<WorkerFailure> failures;  // of the last attempt, first failure first
  std::string summary;      // what went wrong ("" on success); also sent to the sink unless quiet
};

// Checks the options (gr::Error naming the bad one).
void validate(const LaunchOptions& options);

// The variables a worker gets: RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK,
// MASTER_ADDR, MASTER_PORT, GRADRING_RESTART_COUNT, GRADRING_MAX_RESTARTS, OMP_NUM_THREADS=1
// when several workers share the node and neither the launcher's environment nor
// options.env sets it; then options.env.
EnvVars worker_environment(const LaunchOptions& options, int local_rank, int restart_count);

// Runs `command` (program and arguments) in nproc_per_node worker processes.
LaunchResult launch(const std::vector<std::string>& command, const LaunchOptions& options);
// Forks nproc_per_node workers that each run fn(rank) (an exception fails that worker,
// with its what() on the worker's stderr). Each starts with set_num_threads(1): a forked
// child cannot use the parent's OpenMP threads (libgomp would hang).
LaunchResult launch(const std::function<void(int rank)>& fn, const LaunchOptions& options);

struct SpawnOptions {
  std::chrono::milliseconds timeout{std::chrono::minutes(2)};  // 0: no limit
  std::string master_addr = "127.0.0.1";
  int master_port = 0;  // 0: a free local port
  EnvVars env;
  std::chrono::milliseconds grace_period{5000};
  LineSink sink;  // empty: prefixed lines on this process's stdout/stderr
};

// Like torch.multiprocessing.spawn: forks nprocs processes running fn(rank) with the
// launcher's environment (a one-node job), forwards their output, and returns when all
// succeeded. Throws gr::Error naming each failed rank with its exit code or signal and
// last stderr lines (an exception's what() among them), or the timeout (every worker
// killed). fn runs in a forked copy of this process: it must report failure by throwing
// or exiting non-zero (a doctest CHECK inside it is lost), and the caller should not hold
// locks in other threads that fn needs.
void spawn(int nprocs, const std::function<void(int rank)>& fn, const SpawnOptions& options = {});

}  // namespace gr::distributed
