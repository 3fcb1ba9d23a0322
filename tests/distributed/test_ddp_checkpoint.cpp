// Activation checkpointing under DDP (Note [Non-reentrant checkpoint]) on 2 and 4 spawned
// ranks: with every block checkpointed, the parameters after K steps equal those without
// checkpointing bitwise (float32 and float64, dropout, overlapped buckets, find_unused_parameters,
// static_graph, no_sync) and those of one process on the concatenated batches (no dropout).
// No parameter is marked ready twice: its accumulator runs once, the rerun's graph never.
#include <chrono>
#include <string>

#include "checkpoint_nets.h"
#include "ddp_test_util.h"
#include "distributed/backends/init.h"
#include "distributed/ddp/ddp.h"
#include "distributed/launch/launcher.h"
#include "test_util.h"

using namespace gr;
using namespace gr::distributed;
using gr::nn::parallel::DistributedDataParallel;
using gr::nn::parallel::DistributedDataParallelOptions;
using namespace std::chrono_literals;
using test::CkptNet;
using test::Data;
using test::make_data;

namespace {

enum class Variant { overlap, find_unused, static_graph, no_sync };
const char* variant_name(Variant v) {
  switch (v) {
    case Variant::overlap: return "overlapped buckets";
    case Variant::find_unused: return "find_unused_parameters";
    case Variant::static_graph: return "static_graph";
    case Variant::no_sync: return "no_sync";
  }
  return "";
}

constexpr int kSteps = 3;
constexpr int64_t kPerRank = 4;
int micro_batches(Variant v) { return v == Variant::no_sync ? 3 : 1; }
// find_unused_parameters: rank 1 uses the extra head in odd steps only, the others never;
// every rank in every step otherwise.
bool uses_extra(Variant v, int rank, int step) { return v != Variant::find_unused || (rank == 1 && step % 2 == 1); }

DistributedDataParallelOptions options_of(Variant v) {
  // A bucket per parameter or two: several buckets overlap with backward.
  auto o = DistributedDataParallelOptions().bucket_cap_mb(600.0 / (1 << 20)).first_bucket_cap_mb(300.0 / (1 << 20));
  if (v == Variant::find_unused) o.find_unused_parameters(true);
  if (v == Variant::static_graph) o.static_graph(true);
  return o;
}

// kSteps SGD steps of DDP on this rank's slices (micro-batches accumulated under no_sync),
// the blocks checkpointed or not; every rank's dropout masks depend on (rank, step, micro).
CkptNet train_ddp(int rank, int world, Variant v, bool checkpointed, double p, ScalarType dtype) {
  const int micro = micro_batches(v);
  Data data = make_data(kSteps * micro, kPerRank * world, dtype);
  manual_seed(5);  // the same initial weights on every rank and in both runs
  CkptNet model(checkpointed, p);
  model->to(dtype);
  DistributedDataParallel ddp(model, default_group(), options_of(v));
  optim::SGD opt(ddp.parameters(), optim::SGDOptions(0.1).momentum(0.9));
  for (int s = 0; s < kSteps; ++s) {
    opt.zero_grad();
    for (int m = 0; m < micro; ++m) {
      const int b = s * micro + m;
      manual_seed(1000 * static_cast<uint64_t>(rank) + static_cast<uint64_t>(b));
      Tensor xs = data.x[b].narrow(0, rank * kPerRank, kPerRank), ys = data.y[b].narrow(0, rank * kPerRank, kPerRank);
      auto step = [&] { (mse_loss(ddp(xs, uses_extra(v, rank, s)), ys) / static_cast<double>(micro)).backward(); };
      if (m + 1 < micro) {
        auto guard = ddp.no_sync();
        step();
      } else {
        step();
      }
    }
    opt.step();
  }
  return model;
}

// The same steps in one process on every rank's slices, without dropout.
CkptNet train_reference(int world, Variant v, ScalarType dtype) {
  const int micro = micro_batches(v);
  Data data = make_data(kSteps * micro, kPerRank * world, dtype);
  manual_seed(5);
  CkptNet model(false, 0.0);
  model->to(dtype);
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  for (int s = 0; s < kSteps; ++s) {
    opt.zero_grad();
    for (int m = 0; m < micro; ++m) {
      const int b = s * micro + m;
      Tensor loss;
      for (int r = 0; r < world; ++r) {
        Tensor l = mse_loss(model(data.x[b].narrow(0, r * kPerRank, kPerRank), uses_extra(v, r, s)),
                            data.y[b].narrow(0, r * kPerRank, kPerRank));
        loss = loss.defined() ? loss + l : l;
      }
      (loss / static_cast<double>(world * micro)).backward();
    }
    opt.step();
  }
  return model;
}

void require_bitwise(nn::Module& got, nn::Module& want, const std::string& what) {
  test::require_same_params(got, want, 0.0, what);
}

void check_ranks(int rank, int world, const char* backend) {
  init_process_group(backend);
  for (Variant v : {Variant::overlap, Variant::find_unused, Variant::static_graph, Variant::no_sync}) {
    const std::string what = std::string(variant_name(v)) + " on rank " + std::to_string(rank) + " of " +
                             std::to_string(world) + " (" + backend + ")";
    for (ScalarType dtype : {kFloat32, kFloat64}) {
      CkptNet with = train_ddp(rank, world, v, true, 0.2, dtype), without = train_ddp(rank, world, v, false, 0.2, dtype);
      require_bitwise(*with, *without, what + ", " + std::string(dtype_name(dtype)) + ", dropout: checkpointed against not");
    }
    CkptNet ddp = train_ddp(rank, world, v, true, 0.0, kFloat64);
    CkptNet ref = train_reference(world, v, kFloat64);
    test::require_same_params(*ddp, *ref, 1e-12, what + ": checkpointed DDP against one process", /*relative=*/true);
  }
  destroy_process_group();
}

}  // namespace

TEST_CASE("DDP with checkpointed blocks on 2 and 4 ranks: bitwise equal to DDP without, and to one process") {
  for (int world : {2, 4}) {
    CAPTURE(world);
    spawn(world, [world](int rank) { check_ranks(rank, world, "gloo"); }, {.timeout = 240s});
  }
}

TEST_CASE("DDP with checkpointed blocks on the shm backend (2 ranks)") {
  spawn(2, [](int rank) { check_ranks(rank, 2, "shm"); }, {.timeout = 240s});
}
