// Runs every collective check on the MPI process group; started by mpirun (see
// tests/CMakeLists.txt). Exits non-zero with the failing check's message.
#include <cstdio>

#include "../collective_checks.h"
#include "distributed/init.h"

int main() {
  using namespace gr::distributed;
  try {
    gr::set_num_threads(1);
    ProcessGroupPtr pg = init_process_group("mpi");
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
