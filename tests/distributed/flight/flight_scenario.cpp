// gradring_flight_scenario: a small training-like loop whose last rank goes wrong at
// iteration 3, for the flight recorder tests (tests/distributed/flight/test_flight.sh). Every
// iteration all-reduces a "gradient" float32 [1000] and then a "loss" float32 [1]; at
// iteration 3 the last rank:
//   skip        skips the loss all-reduce (and carries on)
//   shape       all-reduces a gradient of [999]
//   kill        SIGKILLs itself before the gradient all-reduce
//   broadcast   broadcasts the gradient from rank 0 where the others all-reduce it
//   none        nothing (the job succeeds)
// Usage: gradring_flight_scenario SCENARIO BACKEND [timeout ms]; run under gradring-run
// (or mpirun for BACKEND mpi) with GRADRING_FLIGHT_RECORDER_DIR set.
#include <signal.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "gradring.h"

namespace dist = gr::distributed;

int main(int argc, char** argv) {
  rlimit no_core{0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  if (argc < 3) {
    std::fprintf(stderr, "usage: gradring_flight_scenario skip|shape|kill|broadcast|none gloo|shm|mpi [timeout ms]\n");
    return 2;
  }
  const std::string scenario = argv[1];
  dist::InitOptions o;
  o.backend = argv[2];
  o.timeout = std::chrono::seconds(60);  // the rendezvous: a loaded machine starts ranks slowly
  try {
    dist::ProcessGroupPtr pg = dist::init_process_group(o);
    pg->set_timeout(std::chrono::milliseconds(argc > 3 ? std::atoi(argv[3]) : 3000));  // the collectives
    const bool culprit = pg->rank() == pg->size() - 1;
    for (int it = 0; it < 6; ++it) {
      const bool now = culprit && it == 3;
      if (now && scenario == "kill") raise(SIGKILL);
      gr::Tensor grad = gr::full({now && scenario == "shape" ? 999 : 1000}, 1.0);
      if (now && scenario == "broadcast")
        pg->broadcast(grad, 0)->wait();
      else
        pg->allreduce(grad)->wait();
      gr::Tensor loss = gr::full({1}, static_cast<double>(pg->rank()));
      if (!(now && scenario == "skip")) pg->allreduce(loss)->wait();
    }
    pg->barrier()->wait();
    std::printf("rank %d: done\n", pg->rank());
    dist::destroy_process_group();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
