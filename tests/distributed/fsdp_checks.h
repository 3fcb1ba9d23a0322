// The fully_shard checks that test_fsdp.cpp runs on gloo and shm and mpi/mpi_check.cpp on
// MPI: float64 training with every Linear a unit (uneven shards) against DDP with the full
// optimizer and against one process on the concatenated batch, with gradient accumulation
// (set_requires_gradient_sync), clipping over the shards, several optimizers, gradients and
// gathers in pieces and explicit (or no) prefetch; each fails
// with a gr::Error naming the parameter that differs.
#pragma once

#include <memory>
#include <string>

#include "ddp_test_util.h"
#include "distributed/backends/init.h"
#include "distributed/ddp/ddp.h"
#include "distributed/fsdp/fsdp_unit.h"  // find_unit
#include "distributed/fsdp/fully_shard.h"
#include "zero_checks.h"

namespace gr::test {

namespace fsdp = distributed::fsdp;

// More optimizers than zero_checks.h's Kind: anything element-wise steps a shard as it
// steps the whole parameter.
enum class FsdpOpt { SGD, Adam, AdamW, Adagrad, RMSprop, Adadelta, Adamax, NAdam, RAdam };
inline const char* fsdp_opt_name(FsdpOpt k) {
  const char* names[] = {"SGD(momentum)", "Adam", "AdamW", "Adagrad", "RMSprop", "Adadelta", "Adamax", "NAdam", "RAdam"};
  return names[static_cast<int>(k)];
}
inline std::unique_ptr<optim::Optimizer> make_optimizer(FsdpOpt k, const TensorList& params) {
  switch (k) {
    case FsdpOpt::SGD: return factory_of(Kind::SGD)({optim::OptimizerParamGroup(params)});
    case FsdpOpt::Adam: return factory_of(Kind::Adam)({optim::OptimizerParamGroup(params)});
    case FsdpOpt::AdamW: return factory_of(Kind::AdamW)({optim::OptimizerParamGroup(params)});
    case FsdpOpt::Adagrad: return std::make_unique<optim::Adagrad>(params, optim::AdagradOptions(0.05).weight_decay(1e-3));
    case FsdpOpt::RMSprop: return std::make_unique<optim::RMSprop>(params, optim::RMSpropOptions(1e-2).momentum(0.5));
    case FsdpOpt::Adadelta: return std::make_unique<optim::Adadelta>(params, optim::AdadeltaOptions(1.0).weight_decay(1e-3));
    case FsdpOpt::Adamax: return std::make_unique<optim::Adamax>(params, optim::AdamaxOptions(1e-2).weight_decay(1e-3));
    case FsdpOpt::NAdam:
      return std::make_unique<optim::NAdam>(params, optim::NAdamOptions(1e-2).weight_decay(1e-3).decoupled_weight_decay(true));
    case FsdpOpt::RAdam: return std::make_unique<optim::RAdam>(params, optim::RAdamOptions(1e-2).weight_decay(1e-3));
  }
  return nullptr;
}

// fully_shard on every child of `model` that owns parameters (bottom-up), then the root.
template <class M>
fsdp::FSDPModule shard_children_then_root(M& model, const fsdp::FullyShardOptions& options = {}) {
  for (const auto& child : model->children())
    if (!child->parameters().empty()) fsdp::fully_shard(child, options);
  return fsdp::fully_shard(model, options);
}

// Every unit of the tree gathered (FSDPModule::unshard), so the module's tensors can be read;
// reshard_all frees them again.
inline void unshard_all(nn::Module& root) {
  for (const auto& m : root.modules())
    if (distributed::fsdp::find_unit(m.get())) fsdp::fsdp_module(*m).unshard();
}
inline void reshard_all(nn::Module& root) {
  for (const auto& m : root.modules())
    if (distributed::fsdp::find_unit(m.get())) fsdp::fsdp_module(*m).reshard();
}

// The units below `root` that own parameters, in registration order (children first as
// shard_children_then_root applies them; the root itself not included).
inline std::vector<fsdp::FSDPModule> child_units(nn::Module& root) {
  std::vector<fsdp::FSDPModule> out;
  for (const auto& m : root.modules(/*include_self=*/false))
    if (distributed::fsdp::find_unit(m.get())) out.push_back(fsdp::fsdp_module(*m));
  return out;
}

// Explicit prefetch (set_modules_to_forward_prefetch / _backward_prefetch) over child units
// that run in registration order: each prefetches the `ahead` units after it in forward and
// before it in backward; ahead 0: set_prefetch_enabled(false) on every unit, no prefetch.
inline void set_prefetch(nn::Module& root, int ahead) {
  if (ahead == 0) return fsdp::fsdp_module(root).set_prefetch_enabled(false);
  std::vector<fsdp::FSDPModule> units = child_units(root);
  for (size_t i = 0; i < units.size(); ++i) {
    std::vector<fsdp::FSDPModule> fwd, bwd;
    for (size_t k = 1; k <= static_cast<size_t>(ahead); ++k) {
      if (i + k < units.size()) fwd.push_back(units[i + k]);
      if (i >= k) bwd.push_back(units[i - k]);
    }
    units[i].set_modules_to_forward_prefetch(fwd);
    units[i].set_modules_to_backward_prefetch(bwd);
  }
}

struct FsdpCase {
  FsdpOpt opt = FsdpOpt::Adam;
  int micro = 1;          // micro-batches per step; all but the last without gradient sync
  double clip = 0;        // > 0: clip_grad_norm_ to this before each step
  bool reshard_after_forward = true;
  int steps = 3;
  double bucket_mb = 0;   // > 0: reduce-scatters and all-gathers in pieces of this many MiB
  int prefetch = -1;      // -1: the learned default; else set_prefetch(model, prefetch)
};

// FSDP against DDP + the full optimizer (`ddp_tol`: 0 where both add in one order) and
// against one process on the concatenated batch (1e-12).
template <class M>
void check_fsdp_equals_ddp(int rank, int world, const FsdpCase& c, double ddp_tol) {
  Data data = make_data(c.steps * c.micro, 4 * world);
  M single, ref, model;
  for (M* m : {&single, &ref, &model}) (*m)->to(kFloat64);
  ref->load_state_dict(single->state_dict());
  model->load_state_dict(single->state_dict());
  DistributedDataParallel ddp(ref, default_group());
  fsdp::FSDPModule root = shard_children_then_root(model, fsdp::FullyShardOptions()
                                                             .reshard_after_forward(c.reshard_after_forward)
                                                             .reduce_scatter_bucket_cap_mb(c.bucket_mb)
                                                             .all_gather_bucket_cap_mb(c.bucket_mb));
  if (c.prefetch >= 0) set_prefetch(*model, c.prefetch);
  auto opt_single = make_optimizer(c.opt, single->parameters());
  auto opt_ddp = make_optimizer(c.opt, ddp.parameters());
  auto opt = make_optimizer(c.opt, root.parameters());
  const int64_t per = 4;
  const double scale = 1.0 / static_cast<double>(c.micro);
  for (int s = 0; s < c.steps; ++s) {
    for (int m = 0; m < c.micro; ++m) {
      const int b = s * c.micro + m;
      Tensor x = data.x[b].narrow(0, rank * per, per), y = data.y[b].narrow(0, rank * per, per);
      (mse_loss(single(data.x[b]), data.y[b]) * scale).backward();
      const bool sync = m + 1 == c.micro;
      root.set_requires_gradient_sync(sync);
      if (sync) {
        (mse_loss(ddp(x), y) * scale).backward();
      } else {
        auto guard = ddp.no_sync();
        (mse_loss(ddp(x), y) * scale).backward();
      }
      (mse_loss(model(x), y) * scale).backward();
    }
    if (c.clip > 0) {
      nn::utils::clip_grad_norm_(single->parameters(), c.clip);
      nn::utils::clip_grad_norm_(ddp.parameters(), c.clip);
      fsdp::clip_grad_norm_(root, c.clip);
    }
    for (auto* o : {opt_single.get(), opt_ddp.get(), opt.get()}) {
      o->step();
      o->zero_grad();
    }
  }
  const std::string what = std::string("fully_shard, ") + fsdp_opt_name(c.opt) + ", micro " + std::to_string(c.micro) +
                           ", clip " + std::to_string(c.clip) + (c.reshard_after_forward ? "" : ", kept after forward") +
                           (c.bucket_mb > 0 ? ", pieces of " + std::to_string(c.bucket_mb) + " MiB" : "") +
                           (c.prefetch >= 0 ? ", prefetch " + std::to_string(c.prefetch) : "") +
                           " on rank " + std::to_string(rank) + " of " + std::to_string(world);
  // Between steps a rank holds its shards only: no gathered parameter, no full gradient.
  for (const auto& [name, p] : model->named_parameters())
    GR_CHECK(p.storage().is_released() && !p.grad().defined(), what, ": ", name, " holds memory after the step");
  // This rank's shard rows equal the reference's rows (padding zero), then the gathered model.
  const auto shards = root.named_parameters();
  const auto want = ref->named_parameters();
  for (const auto& [name, local] : shards) {
    const Tensor& full = *want.find(name);
    const int64_t rows = full.dim() > 0 ? full.size(0) : 1, c_rows = local.size(0);
    const int64_t lo = std::min<int64_t>(rank * c_rows, rows), held = std::min<int64_t>(rows - lo, c_rows);
    const Tensor flat_full = full.reshape({rows, -1}), flat_local = local.reshape({c_rows, -1});
    double d = held > 0 ? max_abs_diff(flat_local.narrow(0, 0, held), flat_full.narrow(0, lo, held)) : 0.0;
    if (held < c_rows) d = std::max(d, flat_local.narrow(0, held, c_rows - held).abs().max().item<double>());
    GR_CHECK(d <= ddp_tol || (c.clip > 0 && d <= 1e-12), what, ": shard of ", name, " differs from DDP's by ", d);
  }
  unshard_all(*model);
  require_same_params(*model, *ref, c.clip > 0 ? std::max(ddp_tol, 1e-12) : ddp_tol, what + " (against DDP)");
  require_same_params(*model, *single, 1e-12, what + " (against one process)");
  reshard_all(*model);
}

}  // namespace gr::test
