// Activation checkpointing under fully_shard (Note [Non-reentrant checkpoint], Note [FSDP
// units]) on 2 and 4 spawned ranks: every sharded block called through utils::checkpoint gives
// the shard gradients and the parameters after K steps of the same run without checkpointing,
// bitwise (float32 and float64, dropout, reshard_after_forward on and off), and every unit is
// gathered as often: the rerun inside backward finds its unit gathered by the pre-backward.
#include <chrono>
#include <map>
#include <string>

#include "checkpoint_nets.h"
#include "core/profiler.h"
#include "distributed/backends/init.h"
#include "distributed/fsdp/fsdp_checkpoint.h"
#include "distributed/launch/launcher.h"
#include "fsdp_checks.h"
#include "test_util.h"

using namespace gr;
using namespace gr::distributed;
using namespace gr::test;
using namespace std::chrono_literals;

namespace {

constexpr int kSteps = 3;
constexpr int64_t kPerRank = 4;

struct Run {
  OrderedDict<Tensor> params;          // the full model after kSteps steps
  std::map<std::string, Tensor> grads; // this rank's shard gradients of the last step
  std::map<std::string, int> gathers;  // "all-gather <unit>" spans, by unit
};

// kSteps AdamW steps of fully_shard (every child a unit, then the root) on this rank's
// slices, the blocks checkpointed or not, dropout 0.2 with masks depending on (rank, step).
// The `extra` head runs in odd steps only: a unit absent from some iterations.
Run train(int rank, int world, bool checkpointed, bool reshard_after_forward, ScalarType dtype) {
  Data data = make_data(kSteps, kPerRank * world, dtype);
  manual_seed(5);  // the same initial weights on every rank and in both runs
  CkptNet model(checkpointed, 0.2);
  model->to(dtype);
  auto root = shard_children_then_root(model, fsdp::FullyShardOptions().reshard_after_forward(reshard_after_forward));
  optim::AdamW opt(root.parameters(), optim::AdamWOptions(1e-2).weight_decay(0.1));
  Run run;
  profiler::reset();
  profiler::enable();
  for (int s = 0; s < kSteps; ++s) {
    manual_seed(1000 * static_cast<uint64_t>(rank) + static_cast<uint64_t>(s));
    Tensor x = data.x[s].narrow(0, rank * kPerRank, kPerRank), y = data.y[s].narrow(0, rank * kPerRank, kPerRank);
    mse_loss(model(x, s % 2 == 1), y).backward();
    if (s + 1 == kSteps)
      for (const auto& [name, p] : root.named_parameters())
        if (p.grad().defined()) run.grads[name] = p.grad().clone();
    opt.step();
    opt.zero_grad();
  }
  profiler::enable(false);
  for (const profiler::Event& e : profiler::events())
    if (e.name.starts_with("all-gather ")) ++run.gathers[e.name.substr(11)];
  run.params = fsdp::full_state_dict(root);
  return run;
}

void check_ranks(int rank, int world) {
  init_process_group("gloo");
  for (bool reshard : {true, false})
    for (ScalarType dtype : {kFloat32, kFloat64}) {
      const std::string what = std::string(dtype_name(dtype)) + (reshard ? "" : ", kept after forward") + " on rank " +
                               std::to_string(rank) + " of " + std::to_string(world);
      const Run with = train(rank, world, true, reshard, dtype), without = train(rank, world, false, reshard, dtype);
      // Shard gradients of the last step and the model after it: bitwise.
      GR_CHECK(with.grads.size() == without.grads.size() && !without.grads.empty(), what, ": ", with.grads.size(),
               " shard gradients checkpointed, ", without.grads.size(), " without");
      for (const auto& [name, g] : without.grads) {
        GR_CHECK(with.grads.contains(name), what, ": no gradient for ", name, " when checkpointed");
        const double d = max_abs_diff(with.grads.at(name), g);
        GR_CHECK(d == 0, what, ": the shard gradient of ", name, " differs by ", d, " when checkpointed");
      }
      GR_CHECK(with.params.size() == without.params.size(), what, ": parameter count differs");
      for (const auto& [name, p] : without.params) {
        const double d = max_abs_diff(*with.params.find(name), p);
        GR_CHECK(d == 0, what, ": parameter ", name, " differs by ", d, " after ", kSteps, " checkpointed steps");
      }
      // Gathers: per step, a unit resharded after forward is gathered in forward and again
      // before its backward; one kept after forward (and the root, which owns no parameter
      // here and gathers nothing) once. `extra` runs in 1 of the 3 steps. The rerun adds none.
      const int per_step = reshard ? 2 : 1;
      for (const char* unit : {"in", "block0", "block1", "block2", "head", "extra"}) {
        const int want = per_step * (std::string(unit) == "extra" ? 1 : kSteps);
        for (const Run* r : {&with, &without}) {
          const auto it = r->gathers.find(unit);
          const int got = it == r->gathers.end() ? 0 : it->second;
          GR_CHECK(got == want, what, ": unit ", unit, " gathered ", got, " times in ", kSteps, " steps ",
                   r == &with ? "checkpointed" : "without checkpointing", " (", want, " expected)");
        }
      }
      GR_CHECK(with.gathers == without.gathers, what, ": checkpointing changed which units are gathered");
    }
  destroy_process_group();
}

}  // namespace

TEST_CASE("fully_shard with every sharded block under utils::checkpoint on 2 and 4 ranks: bitwise equal to fully_shard without, the same gathers") {
  for (int world : {2, 4}) {
    CAPTURE(world);
    spawn(world, [world](int rank) { check_ranks(rank, world); }, {.timeout = 240s});
  }
}
