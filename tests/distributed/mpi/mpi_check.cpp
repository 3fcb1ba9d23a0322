// Runs every collective check, DDP and the ZeRO checks on the MPI process group; started by
// mpirun (see tests/CMakeLists.txt). Exits non-zero with the failing check's message. With
// --stuck, rank 1 skips an all-reduce that rank 0 issues with a 1 s timeout: the watchdog
// must abort the job with a message naming the call (the test expects that failure, not a
// hang).
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "../collective_checks.h"
#include "../zero_checks.h"
#include "distributed/ddp/ddp.h"
#include "distributed/backends/init.h"

// DDP over MPI: three SGD steps on each rank's slice equal one process on the whole batches.
void check_ddp(const gr::distributed::ProcessGroupPtr& pg) {
  using namespace gr;
  const int world = pg->size(), rank = pg->rank();
  const int64_t per = 3;
  nn::Sequential ref(nn::Linear(5, 7), nn::ReLU(), nn::Linear(7, 2)), model(nn::Linear(5, 7), nn::ReLU(), nn::Linear(7, 2));
  ref->to(kFloat64);
  model->to(kFloat64);
  if (rank == 0) model->load_state_dict(ref->state_dict());
  nn::parallel::DistributedDataParallel ddp(model, pg, nn::parallel::DistributedDataParallelOptions().bucket_cap_mb(1e-9));
  optim::SGD opt_ref(ref->parameters(), optim::SGDOptions(0.1)), opt(ddp.parameters(), optim::SGDOptions(0.1));
  Generator g(3);
  for (int s = 0; s < 3; ++s) {
    Tensor x = randn({per * world, 5}, TensorOptions(kFloat64), &g), y = randn({per * world, 2}, TensorOptions(kFloat64), &g);
    opt_ref.zero_grad();
    mse_loss(ref->forward(x), y).backward();
    opt_ref.step();
    opt.zero_grad();
    mse_loss(ddp(x.narrow(0, rank * per, per)), y.narrow(0, rank * per, per)).backward();
    opt.step();
  }
  TensorList a = model->parameters(), b = ref->parameters();
  GR_CHECK(a.size() == b.size(), "mpi DDP: ", a.size(), " parameters against ", b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const double d = gr::test::max_abs_diff(a[i], b[i]);
    GR_CHECK(d < 1e-12, "mpi DDP: parameter ", i, " differs from the single-process result by ", d);
  }
}

// ZeRO-1, the optimizer in backward and ZeRO-2 over MPI's allgather and reduce_scatter,
// against DDP with the full optimizer (tests/distributed/zero_checks.h, as test_zero.cpp runs
// them on gloo and shm): bitwise where both add in one order (ZeRO-1 and the optimizer in
// backward all-reduce as DDP does; ZeRO-2 on 2 ranks: a + b == b + a), else to 1e-12.
void check_zero(const gr::distributed::ProcessGroupPtr& pg) {
  using namespace gr::test;
  const int world = pg->size(), rank = pg->rank();
  const double sharded = world <= 2 ? 0.0 : 1e-12;
  for (Kind kind : {Kind::SGD, Kind::Adam, Kind::AdamW}) {
    check_zero_equals_ddp<Uneven>(rank, world, kind, 48.0 / (1 << 20), false);
    check_zero_equals_ddp<Deep>(rank, world, kind, 25, true);
    check_in_backward_equals_ddp<Uneven>(rank, world, kind, false, 1e-9, 0.0);
    check_in_backward_equals_ddp<Uneven>(rank, world, kind, true, 200.0 / (1 << 20), sharded);
    check_in_backward_equals_ddp<Deep>(rank, world, kind, true, 25, sharded);
  }
  check_in_backward_equals_ddp<Deep>(rank, world, Kind::AdamW, true, 1000.0 / (1 << 20), 1e-12, /*micro=*/3);
}

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
    check_ddp(pg);
    check_zero(pg);
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
