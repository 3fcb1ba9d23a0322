// DistributedDataParallel: wraps a module so that every rank trains the same model on its own
// slice of each batch, averaging gradients across ranks while backward is still running.
// The gradient machinery is the Reducer (reducer.h); see docs/ddp-internals.md.
#pragma once

#include <functional>
#include <memory>
#include <type_traits>
#include <utility>

#include "distributed/backends/process_group.h"
#include "distributed/ddp/reducer.h"
#include "nn/module.h"
#include "nn/module_holder.h"
#include "nn/options.h"
#include "nn/ordered_dict.h"

namespace gr::nn::parallel {

using distributed::allreduce_hook;
using distributed::bf16_compress_hook;
using distributed::CommHook;
using distributed::fp16_compress_hook;
using distributed::GradBucket;

struct DistributedDataParallelOptions {
  // Later buckets close once they hold this many MiB of gradients (torch: 25).
  GR_ARG(double, bucket_cap_mb) = 25;
  // The first bucket in registration order (the last one reduced) closes at this size, so
  // little communication is left after backward ends (torch: 1 MiB).
  GR_ARG(double, first_bucket_cap_mb) = 1;
  // Broadcast rank 0's buffers (BatchNorm running stats) before every forward.
  GR_ARG(bool, broadcast_buffers) = true;
  // Walk the graph after each forward and mark parameters it does not reach as ready, so a
  // model that skips some parameters in an iteration does not stall.
  GR_ARG(bool, find_unused_parameters) = false;
  // Make each .grad a view into its bucket: no copy back after the all-reduce, and the
  // memory of one copy of the gradients saved.
  GR_ARG(bool, gradient_as_bucket_view) = false;
  // The set of used parameters and their order never change: buckets are rebuilt once in the
  // observed order even with find_unused_parameters, and unused parameters are found once.
  GR_ARG(bool, static_graph) = false;
  // ZeRO stage 2 (gradring's own; torch has it only in FSDP): every bucket is reduce-scattered,
  // each rank keeps and steps only its shard of the gradients and of the optimizer state,
  // and the parameters are all-gathered when backward ends. Needs
  // apply_optimizer_in_backward. See Note [Gradient sharding] in reducer_step.cpp.
  GR_ARG(bool, shard_gradients) = false;
  // With shard_gradients (gradring's own): backward ends once the parameters' all-gathers
  // are launched, and the next forward waits for each bucket just before the first module
  // owning one of its parameters runs (a forward pre-hook), so the gathers overlap the
  // forward. Whatever reads the model through DDP (module(), parameters(), state_dict(),
  // eval(), the snapshot and optimizer-state functions) waits first; read the bare model's
  // tensors directly only after wait_for_parameters(). See Note [Gathers in forward] in
  // ddp_gather.cpp for what is and is not protected.
  GR_ARG(bool, gather_in_forward) = false;
};

struct BufferBroadcast;  // ddp.cpp: a buffer broadcast in flight (gather_in_forward)

// Everything that does not depend on the wrapped module's type: the Reducer, parameter and
// buffer broadcasts, no_sync, join, hooks. Registers the wrapped module's own parameters,
// buffers and children under their own names, so state_dict() has no "module." prefix and
// loads into the bare model (and the other way round).
class DistributedDataParallelBase : public Module {
 public:
  DistributedDataParallelBase(std::shared_ptr<Module> module, distributed::ProcessGroupPtr group,
                              const DistributedDataParallelOptions& options);
  ~DistributedDataParallelBase() override;

  const DistributedDataParallelOptions& options() const { return options_; }
  const distributed::ProcessGroupPtr& process_group() const { return group_; }
  distributed::Reducer& reducer() { return *reducer_; }
  const distributed::Reducer& reducer() const { return *reducer_; }

  // While the returned guard lives, backward passes only accumulate gradients locally; the
  // first synchronised backward after it all-reduces the accumulated sum.
  class NoSyncGuard {
   public:
    explicit NoSyncGuard(DistributedDataParallelBase& ddp);
    ~NoSyncGuard();
    NoSyncGuard(const NoSyncGuard&) = delete;
    NoSyncGuard& operator=(const NoSyncGuard&) = delete;

   private:
    DistributedDataParallelBase& ddp_;
    bool previous_;
  };
  [[nodiscard]] NoSyncGuard no_sync() { return NoSyncGuard(*this); }

  // Runs `body` (this rank's training loop) with uneven inputs allowed: once a rank's body
  // returns, it shadows the collectives of the ranks still training (zeros for gradients)
  // until every rank has finished, so nobody hangs. Gradients stay divided by the full world
  // size. Every rank must call join; inside it, forward and backward alternate as usual. At
  // the end every rank takes the parameters and buffers of the lowest rank that trained to
  // the end (the others skipped optimizer steps). Not with no_sync or SyncBatchNorm inside.
  void join(const std::function<void()>& body);

  // Replaces how a bucket is reduced (default: all-reduce of the sum of gradients that are
  // already divided by the world size). Call before the first forward.
  void register_comm_hook(CommHook hook);

  // The optimizer step moves into backward: each bucket's parameters (with shard_gradients:
  // this rank's shard of each bucket) are stepped by an optimizer made by `optimizer_class`
  // as soon as the bucket is reduced, and their .grad cleared; the training loop calls no
  // optimizer.step(). Call once, before the first forward:
  //   ddp.apply_optimizer_in_backward(gr::distributed::optimizer_class<gr::optim::AdamW>(opts));
  // See Note [Optimizer in backward] in reducer_step.cpp.
  void apply_optimizer_in_backward(distributed::OptimizerFactory optimizer_class);
  // The state of the optimizers stepped in backward (a snapshot's optimizer part; with
  // shard_gradients this rank's shard, refused on another rank or world size).
  // Both wait for the gathers in flight first, so a snapshot's parameters and optimizer
  // state are of the same step (Note [Gathers in forward]).
  OrderedDict<Tensor> optimizer_state_dict() {
    wait_for_parameters();
    return reducer_->optimizer_state_dict();
  }
  void load_optimizer_state_dict(const OrderedDict<Tensor>& state) {
    wait_for_parameters();
    reducer_->load_optimizer_state_dict(state);
  }

  // gather_in_forward: waits for the all-gathers still in flight and copies them into the
  // parameters (and the pending buffer broadcast into the buffers), so that the bare
  // model's tensors are current; a no-op otherwise. Local: no collective is issued.
  void wait_for_parameters();
  // The wrapped model's parameters, current (they wait for the gathers first).
  TensorList parameters(bool recurse = true) {
    wait_for_parameters();
    return Module::parameters(recurse);
  }
  OrderedDict<Tensor> named_parameters(bool recurse = true) {
    wait_for_parameters();
    return Module::named_parameters(recurse);
  }

  // Writes this rank's profiler events (core/profiler.h; switch it on with
  // profiler::enable()) as a Chrome trace `<dir>/rank<r>.json` labelled "rank r": forward,
  // backward ops, each bucket's gradients and all-reduce, the end-of-backward wait. Open the
  // files of all ranks together in Perfetto (ui.perfetto.dev) or chrome://tracing.
  std::string write_chrome_trace(const std::string& dir) const;

  void train(bool on = true) override;
  void pretty_print(std::ostream& out) const override;

 protected:
  // Around the wrapped module's forward.
  void pre_forward();
  void post_forward(const TensorList& outputs);
  Module& base_module() { return *module_; }

 private:
  void sync_buffers();
  void check_and_broadcast_state();
  // ddp_gather.cpp: Note [Gathers in forward].
  struct GatherOwner {
    std::shared_ptr<Module> module;
    std::vector<size_t> buckets;  // holding this module's own parameters
    bool fired = false;           // its pre-hook ran in the current DDP forward
    bool reliable = false;        // ... and in every DDP forward so far
  };
  void install_gather_hooks(const TensorList& params);
  void remove_gather_hooks();
  void gather_before_forward();
  void gather_after_forward();
  // Waits for the buffer broadcast the previous forward issued and copies it out; consume:
  // this forward's broadcast is done (otherwise the next forward still counts it as its own).
  void finish_buffer_broadcast(bool consume);

  std::shared_ptr<Module> module_;
  distributed::ProcessGroupPtr group_;
  DistributedDataParallelOptions options_;
  std::unique_ptr<distributed::Reducer> reducer_;
  bool sync_enabled_ = true;
  bool join_enabled_ = false;
  int64_t forward_start_ns_ = 0;
  std::vector<GatherOwner> gather_owners_;
  std::vector<RemovableHandle> gather_hooks_;
  bool in_forward_ = false;
  bool owners_learned_ = false;  // a DDP forward has run: gather_owners_' reliable is known
  std::unique_ptr<BufferBroadcast> pending_buffers_;
};

namespace detail {
inline TensorList tensors_of(const Tensor& t) { return {t}; }
inline TensorList tensors_of(const TensorList& ts) { return ts; }
template <class... T>
TensorList tensors_of(const std::tuple<T...>& tup) {
  TensorList out;
  std::apply([&](const auto&... e) { (out.push_back(e), ...); }, tup);
  return out;
}
}  // namespace detail

// DistributedDataParallel<M>: M's forward, wrapped. Construct from the model (a ModuleHolder
// like ReferenceCNN, or a std::shared_ptr<MImpl>):
//   gr::nn::parallel::DistributedDataParallel ddp(model, group, options);
//   Tensor y = ddp(x);  loss.backward();  optimizer.step();
// Forward outputs may be a Tensor, a TensorList or a tuple of Tensors.
template <class M>
class DistributedDataParallel : public DistributedDataParallelBase {
 public:
  DistributedDataParallel(std::shared_ptr<M> module, distributed::ProcessGroupPtr group,
                          const DistributedDataParallelOptions& options = {})
      : DistributedDataParallelBase(module, std::move(group), options), typed_(std::move(module)) {}
  DistributedDataParallel(ModuleHolder<M> module, distributed::ProcessGroupPtr group,
                          const DistributedDataParallelOptions& options = {})
      : DistributedDataParallel(module.ptr(), std::move(group), options) {}

  template <class... Args>
  auto forward(Args&&... args) {
    pre_forward();
    auto out = typed_->forward(std::forward<Args>(args)...);
    post_forward(detail::tensors_of(out));
    return out;
  }
  template <class... Args>
  auto operator()(Args&&... args) {
    return forward(std::forward<Args>(args)...);
  }

  // The wrapped model (with gather_in_forward, its parameters current: it waits for the
  // gathers first; a reference kept across a backward sees them stale until the next forward).
  M& module() {
    wait_for_parameters();
    return *typed_;
  }
  const std::shared_ptr<M>& module_ptr() const { return typed_; }

 private:
  std::shared_ptr<M> typed_;
};

template <class M>
DistributedDataParallel(ModuleHolder<M>, distributed::ProcessGroupPtr, const DistributedDataParallelOptions& = {})
    -> DistributedDataParallel<M>;
template <class M>
DistributedDataParallel(std::shared_ptr<M>, distributed::ProcessGroupPtr, const DistributedDataParallelOptions& = {})
    -> DistributedDataParallel<M>;

}  // namespace gr::nn::parallel
