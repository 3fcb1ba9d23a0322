// gradring-run: starts the workers of a distributed job on this node, like torchrun.
//   gradring-run [options] program [args...]
// Sets RANK, LOCAL_RANK, WORLD_SIZE, ... for each worker, prefixes their output lines with
// "[rank N] ", stops the group when a worker fails, restarts it while --max-restarts allows,
// and exits with the failed worker's code. Its own errors exit 2. See docs/launcher.md.
#include <sched.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <gradring/core/error.h>
#include <gradring/distributed/launch/launcher.h>

#include "common/cli.h"

namespace {

namespace dist = gr::distributed;

int available_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
}

int usage_error(const std::string& message) {
  std::fprintf(stderr, "gradring-run: error: %s\n", message.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  dist::LaunchOptions o;
  std::string nproc = "1";
  double monitor_interval = 0.1, grace_period = 5.0;
  bool standalone = false;

  CLI::App app{"Start the workers of a distributed job on this node (like torchrun).\n"
               "usage: gradring-run [options] program [args...]"};
  app.add_option("--nproc-per-node", nproc, "workers on this node: a number, or 'auto' (one per CPU core)")
      ->capture_default_str();
  app.add_option("--nnodes", o.nnodes, "nodes in the job (one gradring-run per node)")
      ->capture_default_str()
      ->check(gr::apps::positive());
  app.add_option("--node-rank", o.node_rank, "this node's rank, 0 .. nnodes-1")
      ->capture_default_str()
      ->check(gr::apps::non_negative());
  app.add_option("--master-addr", o.master_addr, "address of rank 0's node (the store)")->capture_default_str();
  app.add_option("--master-port", o.master_port, "port of the store on the master")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535).description("0..65535"));
  app.add_flag("--standalone", standalone, "single node: master 127.0.0.1 and a free port chosen here");
  app.add_option("--max-restarts", o.max_restarts, "times the group is restarted after a worker fails")
      ->capture_default_str()
      ->check(gr::apps::non_negative());
  app.add_option("--monitor-interval", monitor_interval, "seconds between checks of the workers")
      ->capture_default_str()
      ->check(gr::apps::positive());
  app.add_option("--grace-period", grace_period, "seconds workers get after SIGTERM before SIGKILL")
      ->capture_default_str()
      ->check(gr::apps::non_negative());
  app.prefix_command();  // the program and everything after it go to the workers untouched
  app.footer("Each worker gets RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR,\n"
             "MASTER_PORT, GRADRING_RESTART_COUNT, GRADRING_MAX_RESTARTS (and OMP_NUM_THREADS=1 when\n"
             "several share the node, unless set). Exit status: 0, the failed worker's code (128 +\n"
             "signal when killed), 128 + a forwarded SIGINT/SIGTERM, or 2 for gradring-run's errors.");
  CLI11_PARSE(app, argc, argv);

  std::vector<std::string> command = app.remaining();
  if (!command.empty() && command.front() == "--") command.erase(command.begin());
  if (command.empty()) return usage_error("no program given; usage: gradring-run [options] program [args...]");
  if (command.front().size() > 1 && command.front()[0] == '-')
    return usage_error("unknown option '" + command.front() + "' (options go before the program; see --help)");

  if (nproc == "auto") {
    o.nproc_per_node = available_cores();
  } else {
    size_t used = 0;
    try {
      o.nproc_per_node = std::stoi(nproc, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != nproc.size() || o.nproc_per_node < 1)
      return usage_error("--nproc-per-node must be a positive number or 'auto', got '" + nproc + "'");
  }
  if (o.node_rank >= o.nnodes)
    return usage_error("--node-rank " + std::to_string(o.node_rank) + " must be less than --nnodes " +
                       std::to_string(o.nnodes));
  if (standalone) {
    if (o.nnodes != 1) return usage_error("--standalone is for one node, but --nnodes is " + std::to_string(o.nnodes));
    o.master_addr = "127.0.0.1";
    o.master_port = 0;  // the launcher picks a free port
  }
  o.monitor_interval = std::chrono::milliseconds(std::max<long long>(1, std::llround(monitor_interval * 1000)));
  o.grace_period = std::chrono::milliseconds(std::llround(grace_period * 1000));

  try {
    return dist::launch(command, o).exit_code;
  } catch (const gr::Error& e) {
    return usage_error(e.message());
  }
}
