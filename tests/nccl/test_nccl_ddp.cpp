// DistributedDataParallel and SyncBatchNorm on the NCCL group (one GPU per rank) against one
// process on the CPU with the concatenated batches: parameters after K SGD steps, and
// SyncBatchNorm's output, input gradient and running statistics.
#include <doctest/doctest.h>

#include <chrono>

#include "cuda_kernels/runtime.h"
#include "distributed/ddp/ddp.h"
#include "distributed/backends/init.h"
#include "distributed/launch/launcher.h"
#include "distributed/ddp/sync_batch_norm.h"
#include "nccl_test_util.h"

using gr::test::max_rel_diff;  // compare.h: NaN-safe, shapes must match

using namespace gr;
using namespace gr::distributed;
using gr::nn::parallel::DistributedDataParallel;
using gr::nn::parallel::DistributedDataParallelOptions;
using gr::test::g_nccl_ranks;
using namespace std::chrono_literals;

namespace {

struct MlpImpl : nn::Module {
  MlpImpl()
      : fc1(register_module("fc1", nn::Linear(6, 16))),
        fc2(register_module("fc2", nn::Linear(16, 16))),
        fc3(register_module("fc3", nn::Linear(16, 3))) {}
  Tensor forward(const Tensor& x) { return fc3(relu(fc2(relu(fc1(x))))); }
  nn::Linear fc1, fc2, fc3;
};
GR_MODULE(Mlp);

// K steps of DDP on the GPUs (each rank its slice of every batch) and of one CPU process on
// the whole batches, from the same start (DDP broadcasts rank 0's weights).
void check_ddp(int rank, int world, const DistributedDataParallelOptions& opts, const char* what) {
  const int64_t per_rank = 8, steps = 5;
  const Device dev = test::rank_device(rank);
  Generator g(7);
  std::vector<Tensor> xs, ys;
  for (int s = 0; s < steps; ++s) {
    xs.push_back(randn({per_rank * world, 6}, TensorOptions(kFloat32), &g));
    ys.push_back(randn({per_rank * world, 3}, TensorOptions(kFloat32), &g));
  }
  Mlp ref, model;
  if (rank == 0) model->load_state_dict(ref->state_dict());
  model->to(dev);
  DistributedDataParallel ddp(model, default_group(), opts);
  optim::SGD opt_ref(ref->parameters(), optim::SGDOptions(0.05).momentum(0.9));
  optim::SGD opt(ddp.parameters(), optim::SGDOptions(0.05).momentum(0.9));
  for (int s = 0; s < steps; ++s) {
    opt_ref.zero_grad();
    mse_loss(ref(xs[s]), ys[s]).backward();
    opt_ref.step();
    opt.zero_grad();
    Tensor x = xs[s].narrow(0, rank * per_rank, per_rank).to(dev);
    Tensor y = ys[s].narrow(0, rank * per_rank, per_rank).to(dev);
    mse_loss(ddp(x), y).backward();
    opt.step();
  }
  for (const auto& [name, p] : ref->named_parameters()) {
    const double d = max_rel_diff(*model->named_parameters().find(name), p);
    GR_CHECK(d < 1e-4, what, " on rank ", rank, ": parameter ", name, " differs from one process by ", d);
  }
}

}  // namespace

TEST_SUITE("nccl") {
  TEST_CASE("DDP on NCCL equals one process on the concatenated batch") {
    spawn(g_nccl_ranks, [](int rank) {
      cuda::set_device(rank);
      init_process_group("nccl");
      const int world = get_world_size();
      check_ddp(rank, world, DistributedDataParallelOptions(), "default buckets");
      check_ddp(rank, world, DistributedDataParallelOptions().bucket_cap_mb(1e-9).first_bucket_cap_mb(1e-9),
                "one bucket per parameter");
      check_ddp(rank, world, DistributedDataParallelOptions().gradient_as_bucket_view(true),
                "gradients as bucket views");
      destroy_process_group();
    }, {.timeout = 300s});
  }

  TEST_CASE("SyncBatchNorm on NCCL equals BatchNorm on the whole batch in one process") {
    spawn(g_nccl_ranks, [](int rank) {
      cuda::set_device(rank);
      init_process_group("nccl");
      const int world = get_world_size();
      const Device dev = test::rank_device(rank);
      Generator g(3);
      const int64_t per_rank = 3;
      Tensor x = randn({per_rank * world, 4, 5, 5}, TensorOptions(kFloat32), &g) * 2.0 + 1.0;
      Tensor dy = randn({per_rank * world, 4, 5, 5}, TensorOptions(kFloat32), &g);
      nn::BatchNorm2d ref(nn::BatchNorm2dOptions(4));
      Tensor xr = x.detach().requires_grad_(true);
      Tensor ref_out = ref(xr);
      (ref_out * dy).sum().backward();

      nn::BatchNorm2d bn = make_sync_batch_norm(nn::BatchNorm2dOptions(4), default_group());
      bn->to(dev);
      Tensor xl = x.narrow(0, rank * per_rank, per_rank).to(dev).detach().requires_grad_(true);
      Tensor out = bn(xl);
      (out * dy.narrow(0, rank * per_rank, per_rank).to(dev)).sum().backward();
      const double d_out = max_rel_diff(out, ref_out.narrow(0, rank * per_rank, per_rank));
      const double d_grad = max_rel_diff(xl.grad(), xr.grad().narrow(0, rank * per_rank, per_rank));
      const double d_var = max_rel_diff(bn->running_var, ref->running_var);
      GR_CHECK(d_out < 1e-4 && d_grad < 1e-4, "rank ", rank, ": SyncBatchNorm differs from BatchNorm: output ", d_out,
               ", input gradient ", d_grad);
      GR_CHECK(d_var < 1e-3, "rank ", rank, ": running_var differs by ", d_var);
      destroy_process_group();
    }, {.timeout = 120s});
  }
}
