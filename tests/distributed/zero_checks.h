// The ZeRO checks that test_zero.cpp runs on gloo and shm and mpi/mpi_check.cpp on MPI:
// DDP with the full optimizer against ZeroRedundancyOptimizer (ZeRO-1) and against DDP whose
// optimizer runs in backward, sharded (ZeRO-2) or not, over the same start and data; each
// fails with a gr::Error naming the parameter that differs.
#pragma once

#include <algorithm>
#include <memory>
#include <string>

#include "ddp_test_util.h"
#include "distributed/backends/init.h"
#include "distributed/ddp/ddp.h"
#include "distributed/ddp/zero_redundancy_optimizer.h"

namespace gr::test {

using distributed::default_group;
using distributed::OptimizerFactory;
using distributed::optimizer_class;
using distributed::ZeroRedundancyOptimizer;
using nn::parallel::DistributedDataParallel;
using nn::parallel::DistributedDataParallelOptions;

// Uneven parameter sizes: 960, 160, 1120, 56, 168 and 24 bytes in float64.
struct UnevenImpl : test::ThreeLayerImpl {
  UnevenImpl() : ThreeLayerImpl(20, 7) {}
};
GR_MODULE(Uneven);

// Many layers of similar sizes, so that a balanced partition exists (the memory bound).
struct DeepImpl : nn::Module {
  DeepImpl() {
    const int64_t widths[] = {6, 24, 20, 16, 24, 20, 16, 24, 20, 3};
    for (int i = 0; i + 1 < 10; ++i)
      layers.push_back(register_module("fc" + std::to_string(i), nn::Linear(widths[i], widths[i + 1])));
  }
  Tensor forward(Tensor x) {
    for (size_t i = 0; i < layers.size(); ++i) x = i + 1 < layers.size() ? tanh(layers[i](x)) : layers[i](x);
    return x;
  }
  std::vector<nn::Linear> layers;
};
GR_MODULE(Deep);

// A child called as fc2->forward(x) (its forward pre-hook never fires) and a parameter of
// the model itself (read by its own forward, which DDP calls directly): with
// gather_in_forward both must be gathered before the forward starts (Note [Gathers in
// forward]).
struct DirectImpl : test::ThreeLayerImpl {
  DirectImpl() : ThreeLayerImpl(20, 7) { scale = register_parameter("scale", full({3}, 1.5)); }
  Tensor forward(const Tensor& x) { return fc3(relu(fc2->forward(relu(fc1(x))))) * scale; }
  Tensor scale;
};
GR_MODULE(Direct);

enum class Kind { SGD, Adam, AdamW };
inline const char* kind_name(Kind k) { return k == Kind::SGD ? "SGD(momentum)" : k == Kind::Adam ? "Adam" : "AdamW"; }

inline OptimizerFactory factory_of(Kind k) {
  switch (k) {
    case Kind::SGD: return optimizer_class<optim::SGD>(optim::SGDOptions(0.05).momentum(0.9).weight_decay(1e-3));
    case Kind::Adam: return optimizer_class<optim::Adam>(optim::AdamOptions(1e-2).weight_decay(1e-3));
    case Kind::AdamW: return optimizer_class<optim::AdamW>(optim::AdamWOptions(1e-2));
  }
  return nullptr;
}

// One training step of a DDP model on this rank's slice of global batch s.
template <class D>
void train_step(D& ddp, optim::Optimizer& opt, const Data& data, int s, int rank, int world) {
  const int64_t per = data.x[s].size(0) / world;
  opt.zero_grad();
  mse_loss(ddp(data.x[s].narrow(0, rank * per, per)), data.y[s].narrow(0, rank * per, per)).backward();
  opt.step();
}

inline int64_t state_bytes_of(const optim::Optimizer& opt) {
  int64_t bytes = 0;
  for (const auto& [key, t] : opt.state_dict())
    if (key.rfind("state.", 0) == 0) bytes += static_cast<int64_t>(t.nbytes());
  return bytes;
}

// DDP + the full optimizer against DDP + ZeRO over the same start and data: bitwise equal
// parameters after `steps`, consolidated state equal to the full optimizer's on rank 0.
template <class M>
void check_zero_equals_ddp(int rank, int world, Kind kind, double bucket_cap_mb, bool check_memory) {
  const int steps = 4;
  Data data = make_data(steps, 4 * world);
  M ref, model;
  ref->to(kFloat64);
  model->to(kFloat64);
  model->load_state_dict(ref->state_dict());
  DistributedDataParallel ddp_ref(ref, default_group()), ddp(model, default_group());
  std::unique_ptr<optim::Optimizer> full = factory_of(kind)({optim::OptimizerParamGroup(ddp_ref.parameters())});
  ZeroRedundancyOptimizer zero(ddp.parameters(), factory_of(kind), default_group(), bucket_cap_mb);
  for (int s = 0; s < steps; ++s) {
    train_step(ddp_ref, *full, data, s, rank, world);
    train_step(ddp, zero, data, s, rank, world);
  }
  const std::string what = std::string(kind_name(kind)) + " on rank " + std::to_string(rank) + " of " + std::to_string(world);
  require_same_params(*model, *ref, 0.0, what);  // the same gradients and the same update: bitwise
  if (check_memory && world > 1) {
    const double share = static_cast<double>(zero.state_bytes()) / static_cast<double>(state_bytes_of(*full));
    GR_CHECK(share <= 1.1 / world, what, ": optimizer state is ", share, " of the full optimizer's (bound ",
             1.1 / world, ")");
  }
  zero.consolidate_state_dict(0);
  if (rank == 0) {
    const OrderedDict<Tensor> got = zero.state_dict(), want = full->state_dict();
    GR_CHECK(got.size() == want.size(), what, ": consolidated state has ", got.size(), " entries, the full one ",
             want.size());
    for (const auto& [key, t] : want) {
      const Tensor* g = got.find(key);
      GR_CHECK(g != nullptr && g->sizes() == t.sizes() && max_abs_diff(*g, t) == 0, what, ": consolidated '", key,
               "' differs");
    }
  } else {
    bool threw = false;
    try {
      zero.state_dict();
    } catch (const gr::Error& e) {
      threw = std::string(e.what()).find("consolidate_state_dict") != std::string::npos;
    }
    GR_CHECK(threw, what, ": state_dict() without a consolidation on this rank must fail");
  }
}



inline int64_t param_bytes(nn::Module& m) {
  int64_t bytes = 0;
  for (const Tensor& p : m.parameters()) bytes += static_cast<int64_t>(p.nbytes());
  return bytes;
}

// gather_in_forward: between backward and the next forward the gathers are in flight; what
// reads the model in between must see the reference's values. Step s probes one way in:
// the bare model called through its holder, an evaluation through DDP after eval(), the
// bare model's state_dict (what capture_snapshot saves); `s` numbers the probes.
template <class M, class D>
void probe_between_steps(int s, int world, M& model, M& ref, D& ddp, D& ddp_ref, const Tensor& x, double tol,
                         const std::string& what) {
  GR_CHECK(ddp.reducer().gathers_pending() == (world > 1), what, ": after backward ", s, " the gathers should ",
           world > 1 ? "be in flight" : "be done (one rank: nothing to gather)");
  NoGradGuard no_grad;
  const double out_tol = tol == 0 ? 0.0 : 1e-10;
  double d = 0;
  if (s % 3 == 0) {
    d = max_abs_diff(model(x), ref(x));
  } else if (s % 3 == 1) {
    ddp.eval();
    ddp_ref.eval();
    d = max_abs_diff(ddp(x), ddp_ref(x));
    ddp.train();
    ddp_ref.train();
  } else {
    d = max_abs_diff(model->state_dict(), ref->state_dict());  // the same keys, or it throws
  }
  GR_CHECK(d <= out_tol, what, ": probe ", s % 3, " after step ", s, " read stale parameters (differs by ", d, ")");
  GR_CHECK(!ddp.reducer().gathers_pending(), what, ": probe ", s % 3, " left gathers in flight");
}

// DDP + the full optimizer against DDP whose optimizer runs in backward (sharded or not;
// sharded with the gathers overlapped with the next forward when `gather`), over `steps`
// iterations; `micro` > 1: gradient accumulation with no_sync on all but the last
// micro-batch. Returns nothing; fails naming the parameter.
template <class M>
void check_in_backward_equals_ddp(int rank, int world, Kind kind, bool shard, double bucket_cap_mb, double tol,
                                  int micro = 1, bool gather = false) {
  // gather: after every odd step one probe of probe_between_steps (each kind once); after
  // the even ones the next forward finds the gathers in flight.
  const int steps = gather ? 7 : 3;
  Data data = make_data(steps * micro, 4 * world);
  M ref, model;
  ref->to(kFloat64);
  model->to(kFloat64);
  model->load_state_dict(ref->state_dict());
  auto opts = DistributedDataParallelOptions().bucket_cap_mb(bucket_cap_mb).first_bucket_cap_mb(bucket_cap_mb);
  auto sharded = opts;
  sharded.shard_gradients(shard).gather_in_forward(gather);
  DistributedDataParallel ddp_ref(ref, default_group(), opts), ddp(model, default_group(), sharded);
  std::unique_ptr<optim::Optimizer> full = factory_of(kind)({optim::OptimizerParamGroup(ddp_ref.parameters())});
  ddp.apply_optimizer_in_backward(factory_of(kind));
  const int64_t per = 4;
  for (int s = 0; s < steps; ++s) {
    full->zero_grad();
    for (int m = 0; m < micro; ++m) {
      const int b = s * micro + m;
      Tensor x = data.x[b].narrow(0, rank * per, per), y = data.y[b].narrow(0, rank * per, per);
      if (m + 1 < micro) {
        auto g1 = ddp_ref.no_sync();
        auto g2 = ddp.no_sync();
        (mse_loss(ddp_ref(x), y) / static_cast<double>(micro)).backward();
        (mse_loss(ddp(x), y) / static_cast<double>(micro)).backward();
      } else {
        (mse_loss(ddp_ref(x), y) / static_cast<double>(micro)).backward();
        (mse_loss(ddp(x), y) / static_cast<double>(micro)).backward();
      }
    }
    full->step();
    for (const Tensor& p : model->parameters()) GR_CHECK(!p.grad().defined(), "rank ", rank, ": .grad left after the step in backward");
    if (gather && s % 2 == 1)
      probe_between_steps(s / 2, world, model, ref, ddp, ddp_ref, data.x[s].narrow(0, rank * per, per), tol,
                          "ZeRO-2 gather_in_forward on rank " + std::to_string(rank));
  }
  const std::string what = std::string(shard ? gather ? "ZeRO-2 gather_in_forward " : "ZeRO-2 " : "optimizer in backward ") +
                           kind_name(kind) + " on rank " + std::to_string(rank) + " of " + std::to_string(world);
  require_same_params(ddp.module(), *ref, tol, what);  // module() waits for the last gathers
  if (shard && world > 1) {
    // Gradients held between iterations: this rank's shards (1/N, padded), nothing else.
    const std::vector<int64_t> buckets = ddp.reducer().bucket_bytes();
    const int64_t largest = *std::max_element(buckets.begin(), buckets.end());
    const int64_t held = ddp.reducer().gradient_bytes(), total = param_bytes(*model);
    GR_CHECK(held <= total / world + largest, what, ": holds ", held, " bytes of gradients; bound ", total / world,
             " + one bucket ", largest);
    int64_t state = 0;
    for (optim::Optimizer* o : ddp.reducer().in_backward_optimizers()) state += state_bytes_of(*o);
    const double share = static_cast<double>(state) / static_cast<double>(state_bytes_of(*full));
    GR_CHECK(share <= 1.1 / world + 1e-9 + 64.0 / state_bytes_of(*full) * buckets.size(), what,
             ": optimizer state is ", share, " of the full optimizer's");
  }
}


}  // namespace gr::test
