// Runs every collective check on the MPI process group; started by mpirun (see
// tests/CMakeLists.txt). Exits non-zero with the failing check's message. With --stuck, rank
// 1 skips an all-reduce that rank 0 issues with a 1 s timeout: the watchdog must abort the
// job with a message naming the call (the test expects that failure, not a hang).
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "../collective_checks.h"
#include "distributed/init.h"

int main(int argc, char** argv) {
  using namespace gr::distributed;
  try {
    gr::set_num_threads(1);
    ProcessGroupPtr pg = init_process_group("mpi");
    if (argc > 1 && std::strcmp(argv[1], "--stuck") == 0) {
      pg->set_timeout(std::chrono::seconds(1));
      if (pg->rank() == 0) {
        gr::Tensor x = gr::ones({1000});
        pg->allreduce(x)->wait(std::chrono::seconds(60));
      } else {
        std::this_thread::sleep_for(std::chrono::seconds(60));
      }
      std::printf("mpi_check --stuck: rank %d was not aborted\n", pg->rank());
      return 0;
    }
    gr::test::check_collectives(*pg);
    ProcessGroupPtr half = new_group({0, pg->size() - 1});  // every rank calls it
    if (half) {
      gr::Tensor x = gr::full({2}, 1.0, gr::kFloat64);
      half->allreduce(x)->wait();
      GR_CHECK(x[0].item<double>() == 2.0, "mpi new_group sum is ", x[0].item<double>());
    }
    if (pg->rank() == 0) std::printf("mpi_check: %d ranks OK\n", pg->size());
    destroy_process_group();
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mpi_check: %s\n", e.what());
    return 1;
  }
}
