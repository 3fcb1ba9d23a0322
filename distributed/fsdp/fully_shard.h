// fully_shard: fully sharded data parallelism (ZeRO-3) in the shape of PyTorch's FSDP2
// (torch.distributed.fsdp.fully_shard). Applied bottom-up (each transformer block, then the
// root), it makes each module a unit whose parameters every rank stores only a 1/N shard of,
// gathers them just before the unit's forward and again before its backward, frees them
// after, and reduce-scatters the unit's gradients as its backward finishes; the optimizer
// steps this rank's shards. See Note [FSDP units] in fsdp_unit.h and docs/ddp-internals.md.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/arg.h"
#include "distributed/backends/process_group.h"
#include "nn/module.h"
#include "nn/module_holder.h"
#include "nn/ordered_dict.h"

namespace gr::distributed::fsdp {

class FSDPUnit;

// torch.distributed.fsdp.MixedPrecisionPolicy. param_dtype: the dtype parameters are
// all-gathered in and the unit computes in (the shards, which the optimizer steps, keep the
// parameters' own dtype: float32 master weights under bfloat16 compute). reduce_dtype: the
// dtype gradients are reduce-scattered in (unset: param_dtype if set, else the parameters').
// Unlike torch, forward inputs are not cast: give the units inputs in param_dtype (token
// indices need nothing).
struct MixedPrecisionPolicy {
  GR_ARG(std::optional<ScalarType>, param_dtype);
  GR_ARG(std::optional<ScalarType>, reduce_dtype);
};

struct FullyShardOptions {
  // The ranks the unit is sharded over (torch: mesh); null: the default group.
  GR_ARG(ProcessGroupPtr, group);
  // Free the gathered parameters after the unit's forward and gather them again for its
  // backward (torch's default), or keep them until its backward (more memory, one all-gather
  // fewer). The root unit keeps them whenever a backward can follow, as torch's does.
  GR_ARG(bool, reshard_after_forward) = true;
  GR_ARG(MixedPrecisionPolicy, mp_policy);
  // Reduce-scatter the unit's gradients in pieces of at most this many MiB (of the [N, S]
  // reduce-scatter input, in reduce_dtype; a parameter larger than that is a piece of its own),
  // each launched as soon as its parameters' gradients are ready during the unit's backward,
  // in reverse registration order as DDP's buckets, its full gradients dropped once copied in;
  // 0 (the default): one reduce-scatter per unit when its backward ends. No torch counterpart
  // (FSDP2 reduces a unit at once; DeepSpeed's ZeRO-3 reduce_bucket_size is the analogue). See
  // Note [FSDP memory bound] in fsdp_backward.cpp.
  GR_ARG(double, reduce_scatter_bucket_cap_mb) = 0;
  // The same for the all-gathers: the unit gathered in pieces of at most this many MiB, each
  // copied out into the parameters (while the next piece's gather runs) and its buffer freed,
  // so a gather holds two pieces' buffers beside the parameters instead of a whole unit's. 0
  // (the default): one all-gather per unit. A prefetch issues the first piece only.
  GR_ARG(double, all_gather_bucket_cap_mb) = 0;
};

// What fully_shard returns, torch's FSDPModule: a handle to the unit made of `module` (copies
// share it). The module itself is still called as before (`model(x)`), through its holder or
// a Sequential, where its forward pre-hook gathers the parameters.
class FSDPModule {
 public:
  FSDPModule() = default;

  nn::Module& module() const;
  const std::shared_ptr<nn::Module>& module_ptr() const { return module_; }
  const ProcessGroupPtr& process_group() const;

  // This rank's shards of the parameters of this unit and of every unit below it, in the
  // module's registration order, named as the module names them: what the optimizer is built
  // on. Each is a leaf of shape [ceil(dim0 / N), rest...] (rows past the end of the parameter
  // are zero padding and stay zero), a view of its unit's flat shard; its .grad is set after
  // each synchronised backward (summed into when already set, as a parameter's .grad).
  TensorList parameters() const;
  OrderedDict<Tensor> named_parameters() const;

  // false: backward keeps the full gradients locally and reduces nothing (torch's name for
  // DDP's no_sync: gradient accumulation); the next backward with true reduce-scatters the
  // accumulated sum. recurse: for every unit below too.
  void set_requires_gradient_sync(bool requires_sync, bool recurse = true);
  void set_reshard_after_forward(bool reshard, bool recurse = true);
  // torch's explicit prefetch (FSDPModule.set_modules_to_forward_prefetch and
  // set_modules_to_backward_prefetch): the units whose all-gathers this unit issues, in this
  // order, right after its own gather is copied out in its forward (in its backward), instead of
  // the one unit ahead learned from the first iteration (Note [FSDP prefetch]). A singleton list
  // of the unit that runs next behaves as the default; two or more prefetch further ahead and
  // hold more units gathered at once. Every unit must belong to this unit's tree (a gr::Error
  // at the first prefetch otherwise). An empty list is torch's default: the learned one ahead.
  void set_modules_to_forward_prefetch(const std::vector<FSDPModule>& modules);
  void set_modules_to_backward_prefetch(const std::vector<FSDPModule>& modules);
  // gradring's own (torch's FSDP2 always prefetches in backward): false switches this unit's
  // prefetch off in forward and backward, explicit lists included: each unit's gather is issued
  // by its own hook, so at most one unit is gathered at a time (Note [FSDP memory bound] in
  // fsdp_backward.cpp says what that saves and costs); true restores the learned default.
  // recurse: for every unit below too.
  void set_prefetch_enabled(bool enabled, bool recurse = true);
  // Gathers (blocking) or frees this unit's parameters by hand, as torch's unshard/reshard.
  void unshard() const;
  void reshard() const;
  // Whether this unit's parameters are gathered now.
  bool is_unsharded() const;

  // Writes this rank's profiler events (core/profiler.h; switch it on with profiler::enable())
  // as a Chrome trace `<dir>/rank<r>.json` labelled "rank r": the forward and backward ops on
  // the compute thread, with the waits for gathers; a row "fsdp units" with each unit's forward
  // and backward; a row "fsdp all-gather" with each gather (each piece) from issue to done; a row
  // "fsdp reduce-scatter" with each reduce-scatter from launch to done. As DDP's.
  std::string write_chrome_trace(const std::string& dir) const;

  FSDPUnit& unit() const;

 private:
  friend FSDPModule fully_shard(const std::shared_ptr<nn::Module>& module, const FullyShardOptions& options);
  friend FSDPModule fsdp_module(const nn::Module& module);
  FSDPModule(std::shared_ptr<nn::Module> module, std::shared_ptr<FSDPUnit> unit)
      : module_(std::move(module)), unit_(std::move(unit)) {}
  std::shared_ptr<nn::Module> module_;
  std::shared_ptr<FSDPUnit> unit_;
};

// Makes `module` one unit over the parameters it owns that no unit below it owns (apply it to
// the children first, then to the root). Collective: every rank calls it with the same model,
// in the same order; rank 0's parameter values win (broadcast), as DDP's do. The module's
// parameters keep their TensorImpls (what the module's code reads), but own no memory except
// inside the unit's forward and backward: reading them elsewhere is a gr::Error naming the
// unit. See Note [FSDP units] in fsdp_unit.h.
FSDPModule fully_shard(const std::shared_ptr<nn::Module>& module, const FullyShardOptions& options = {});
template <class Impl>
FSDPModule fully_shard(const nn::ModuleHolder<Impl>& module, const FullyShardOptions& options = {}) {
  return fully_shard(std::static_pointer_cast<nn::Module>(module.ptr()), options);
}

// The handle of a module fully_shard was applied to (a gr::Error if it was not).
FSDPModule fsdp_module(const nn::Module& module);

// What fully_shard holds in this process besides the shards (the optimizer's parameters):
// gathered parameters, the all-gather and reduce-scatter buffers, and the units' full
// gradients until their reduce-scatter; now, and the most at once since
// reset_peak_memory_stats(). By tensor sizes; bench_ddp's memory table adds it to the shards.
struct MemoryStats {
  int64_t gathered_bytes = 0;
  int64_t peak_gathered_bytes = 0;
};
MemoryStats memory_stats();
void reset_peak_memory_stats();

// torch.nn.utils.clip_grad_norm_ over sharded parameters: the norm of the gradients of every
// rank's shards together (each rank's sum of |g|^p all-reduced, max for the infinity norm),
// so every rank scales its shards by the same factor. Returns the total norm. Collective.
double clip_grad_norm_(const FSDPModule& root, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);

}  // namespace gr::distributed::fsdp
