// Live-object counts (Note [Live objects]) around a whole model's life on 2 ranks: built,
// wrapped in DDP (its post-accumulate-grad hooks, a comm hook), trained with ZeRO-1, with
// ZeRO-2 (the optimizer in backward, sharded gradients, gathers in forward), through a custom
// Function and a gradient penalty by create_graph, then destroyed: every count is back where
// it was. A planted cycle (a parameter's hook that owns the parameter) keeps them up until it
// is removed.
#include <chrono>
#include <memory>

#include "ddp_test_util.h"
#include "distributed/backends/init.h"
#include "distributed/ddp/comm_hooks.h"
#include "distributed/ddp/ddp.h"
#include "distributed/ddp/zero_redundancy_optimizer.h"
#include "distributed/launch/launcher.h"
#include "test_util.h"

using namespace gr;
using namespace gr::distributed;
using gr::nn::parallel::DistributedDataParallel;
using gr::nn::parallel::DistributedDataParallelOptions;
using namespace std::chrono_literals;

namespace {

// tanh saving its own output (Note [Saved outputs]), with a backward written in gr:: ops so
// that the gradient penalty differentiates it again.
struct Tanh : autograd::Function<Tanh> {
  static Tensor forward(autograd::AutogradContext* ctx, const Tensor& x) {
    Tensor y = x.tanh();
    ctx->save_for_backward({y});
    return y;
  }
  static autograd::variable_list backward(autograd::AutogradContext* ctx, autograd::variable_list g) {
    Tensor y = ctx->get_saved_variables()[0];
    return {g[0] * (1.0 - y * y)};
  }
};

struct NetImpl : nn::Module {
  NetImpl() : fc1(register_module("fc1", nn::Linear(6, 16))), fc2(register_module("fc2", nn::Linear(16, 3))) {}
  Tensor forward(const Tensor& x) { return fc2(Tanh::apply(fc1(x))); }
  nn::Linear fc1, fc2;
};
GR_MODULE(Net);

// What a planted cycle leaves: the parameter it keeps alive and the handle of its hook.
struct Planted {
  std::weak_ptr<TensorImpl> param;
  size_t hook = 0;
};

// Builds, trains and destroys two models on this rank: DDP + ZeRO-1 with a comm hook and a
// gradient penalty (create_graph through the custom Function), then DDP with ZeRO-2.
// `plant`: fc1.weight of the first model gets a hook that owns fc1.weight.
Planted train_and_destroy(int rank, int world, bool plant) {
  const int steps = 3;
  const int64_t per = 4;
  test::Data data = test::make_data(steps, per * world);
  Planted planted;
  {
    Net model;
    model->to(kFloat64);
    DistributedDataParallel ddp(model, default_group(), DistributedDataParallelOptions().bucket_cap_mb(1e-4));
    auto calls = std::make_shared<int>(0);
    ddp.register_comm_hook([calls](ProcessGroup& group, GradBucket& bucket) {
      ++*calls;
      return allreduce_hook(group, bucket);
    });
    ZeroRedundancyOptimizer zero(ddp.parameters(), optimizer_class<optim::Adam>(optim::AdamOptions(1e-2)),
                                 default_group());
    for (int s = 0; s < steps; ++s) {
      Tensor x = data.x[s].narrow(0, rank * per, per).clone().requires_grad_(true);
      Tensor y = data.y[s].narrow(0, rank * per, per);
      zero.zero_grad();
      Tensor out = ddp(x);
      // WGAN-GP-like penalty: d out / d x, differentiated again by the weights.
      Tensor gx = autograd::grad({out.sum()}, {x}, {}, std::nullopt, /*create_graph=*/true)[0];
      (mse_loss(out, y) + 0.1 * (gx * gx).mean()).backward();
      zero.step();
    }
    GR_CHECK(*calls >= steps, "rank ", rank, ": the comm hook ran ", *calls, " times");
    if (plant) {
      Tensor w = model->fc1->weight;
      planted.hook = w.register_post_accumulate_grad_hook([w](Tensor&) {});  // w -> its hooks -> w
      planted.param = w.impl_ptr();
    }
  }
  {
    Net model;
    model->to(kFloat64);
    DistributedDataParallel ddp(
        model, default_group(),
        DistributedDataParallelOptions().bucket_cap_mb(1e-4).shard_gradients(true).gather_in_forward(true));
    ddp.apply_optimizer_in_backward(optimizer_class<optim::SGD>(optim::SGDOptions(0.1).momentum(0.9)));
    for (int s = 0; s < steps; ++s)
      mse_loss(ddp(data.x[s].narrow(0, rank * per, per)), data.y[s].narrow(0, rank * per, per)).backward();
    ddp.wait_for_parameters();
  }
  return planted;
}

}  // namespace

TEST_CASE("live objects: a model built, trained with DDP, ZeRO-1/2, create_graph and a custom Function, then "
          "destroyed leaves nothing; a planted cycle does, until removed") {
  spawn(2, [](int rank) {
    init_process_group("gloo");
    train_and_destroy(rank, 2, false);  // what is made once per process (kernel caches, group buffers)
    const LiveObjects before = live_objects();
    train_and_destroy(rank, 2, false);
    const LiveObjects after = live_objects();
    GR_CHECK(after == before, "rank ", rank, ": live objects ", before, " before and ", after, " after the model's life");

    Planted planted = train_and_destroy(rank, 2, true);
    const LiveObjects leaked = live_objects();
    GR_CHECK(!planted.param.expired() && leaked.tensor_impls > before.tensor_impls && leaked.storages > before.storages,
             "rank ", rank, ": the planted cycle should keep fc1.weight alive (", leaked, " against ", before, ")");
    Tensor(planted.param.lock()).remove_hook(planted.hook);
    GR_CHECK(planted.param.expired() && live_objects() == before, "rank ", rank,
             ": removing the planted hook should free everything (", live_objects(), " against ", before, ")");
    destroy_process_group();
  }, {.timeout = 180s});
}
