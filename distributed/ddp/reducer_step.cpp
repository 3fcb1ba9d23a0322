// The Reducer's optimizer in backward (each bucket's parameters stepped as soon as the
// bucket is reduced) and gradient sharding (ZeRO-2: buckets reduce-scattered, each rank
// stepping its shard, parameters all-gathered at the end of backward).
#include <algorithm>

#include "autograd/grad_mode.h"
#include "core/factory.h"
#include "core/native/copy/copy.h"
#include "core/profiler.h"
#include "distributed/ddp/reducer.h"

namespace gr::distributed {

// Note [Optimizer in backward]
// DDP followed by optimizer.step() leaves the step for after backward, although most of
// the gradients have been reduced long before. ddp.apply_optimizer_in_backward(
// optimizer_class<O>(options)) (torch: _apply_optimizer_in_backward, or ZeRO's
// overlap_with_ddp) gives every parameter its own optimizer of type O; bucket k's
// parameters are stepped as soon as its all-reduce has completed. A registration function
// reads better than a DDPOptions flag here: the flag would need the optimizer's type and
// options anyway, and the call states that DDP now owns the step. Buckets are stepped in
// bucket order, on the backward thread: after each gradient hook, the completed buckets
// are stepped (polling Work::is_completed, so backward never blocks on the network); what
// is still in flight when backward ends is waited for and stepped in finalize_backward.
// The step reads .grad as the reduced bucket's view and then clears .grad (the step is
// done: nothing is left to accumulate into), so the training loop has no
// optimizer.step() and no zero_grad(). Safe because a parameter's hook runs only after
// every use of the parameter in this backward has produced its gradient contribution.
// Not with find_unused_parameters (an unused parameter would be stepped with a zero
// gradient) or join (a joined rank's shadow iteration would step too).

// Note [Gradient sharding]
// DistributedDataParallelOptions::shard_gradients (ZeRO stage 2): bucket k, padded to
// world size * shard.elems, is reduce-scattered instead of all-reduced, so rank r receives
// only the sum of slice r (shard.grad). The gradient hook frees .grad once it is copied
// into the bucket, and the bucket buffer is freed at the end of the iteration, so between
// iterations a rank holds 1/N of the gradients (plus the padding). As soon as the
// reduce-scatter completes, the rank copies the parameters' values of its slice into
// shard.param and steps it with the bucket's own optimizer (element-wise optimizers give
// the same result on a flat slice as on whole parameters), which also holds only 1/N of
// the optimizer state. Bucket k's updated slices are all-gathered as soon as it is stepped
// and the last reduce-scatter has been issued (buckets in order; the gathers run while the
// later buckets are waited for and stepped), and backward ends once every gather is in the
// parameters. Not earlier: every rank must issue the collectives in the same order, and a
// reduce-scatter finishing earlier on one rank must not let an all-gather overtake another
// rank's next reduce-scatter. Later, overlapped with the next forward as FSDP does, only
// with DistributedDataParallelOptions::gather_in_forward: see Note [Gathers in forward] in
// ddp_gather.cpp for how the forward waits for exactly the buckets it needs, and what that
// cannot protect. The layout is never rebuilt
// (the shards' optimizer state depends on it). No communication hooks (they reduce whole
// buckets), no find_unused_parameters, no gradient_as_bucket_view; no_sync accumulates in
// .grad as usual (full size during accumulation) and the synchronised backward shards it.

void Reducer::set_optimizer_in_backward(OptimizerFactory optimizer_class) {
  GR_CHECK(optimizer_class != nullptr, "DistributedDataParallel::apply_optimizer_in_backward: optimizer_class is empty");
  GR_CHECK(iteration_ == 0 && (phase_ == Phase::Idle || phase_ == Phase::Armed) && !step_factory_,
           "DistributedDataParallel::apply_optimizer_in_backward: call it once, before the first forward");
  GR_CHECK(!options_.find_unused_parameters,
           "DistributedDataParallel::apply_optimizer_in_backward: not with find_unused_parameters (a parameter "
           "without a gradient in an iteration would be stepped with a zero gradient)");
  step_factory_ = std::move(optimizer_class);
  if (options_.shard_gradients) {
    for (Bucket& b : buckets_) b.shard.optimizer = step_factory_({optim::OptimizerParamGroup({b.shard.param})});
  } else {
    for (const Tensor& p : params_) param_optimizers_.push_back(step_factory_({optim::OptimizerParamGroup({p})}));
  }
}

std::vector<optim::Optimizer*> Reducer::in_backward_optimizers() const {
  std::vector<optim::Optimizer*> out;
  for (const auto& o : param_optimizers_) out.push_back(o.get());
  for (const Bucket& b : buckets_)
    if (b.shard.optimizer) out.push_back(b.shard.optimizer.get());
  return out;
}

OrderedDict<Tensor> Reducer::optimizer_state_dict() const {
  OrderedDict<Tensor> out;
  const std::string prefix = options_.shard_gradients ? "bucket." : "param.";
  const std::vector<optim::Optimizer*> optimizers = in_backward_optimizers();
  for (size_t k = 0; k < optimizers.size(); ++k)
    for (const auto& [key, t] : optimizers[k]->state_dict()) out.insert(prefix + std::to_string(k) + "." + key, t);
  if (options_.shard_gradients) {
    out.insert("zero.world_size", scalar_tensor(static_cast<double>(group_->size()), kInt64));
    out.insert("zero.rank", scalar_tensor(static_cast<double>(group_->rank()), kInt64));
  }
  return out;
}

void Reducer::load_optimizer_state_dict(const OrderedDict<Tensor>& state) {
  const char* what = "DistributedDataParallel::load_optimizer_state_dict";
  GR_CHECK(step_factory_, what, ": no optimizer in backward (call apply_optimizer_in_backward first)");
  const std::string prefix = options_.shard_gradients ? "bucket." : "param.";
  if (options_.shard_gradients) {
    const Tensor* w = state.find("zero.world_size");
    const Tensor* r = state.find("zero.rank");
    GR_CHECK(w && r, what, ": not the state of sharded gradients (no zero.world_size / zero.rank)");
    GR_CHECK(w->item<int64_t>() == group_->size() && r->item<int64_t>() == group_->rank(), what,
             ": this is the optimizer state shard of rank ", r->item<int64_t>(), " of a world of ", w->item<int64_t>(),
             " ranks, but this is rank ", group_->rank(), " of ", group_->size(),
             ". Sharded gradients' optimizer state resumes only on the same world size and rank.");
  }
  const std::vector<optim::Optimizer*> optimizers = in_backward_optimizers();
  std::vector<OrderedDict<Tensor>> parts(optimizers.size());
  for (const auto& [key, t] : state) {
    if (key == "zero.world_size" || key == "zero.rank") continue;
    GR_CHECK(key.rfind(prefix, 0) == 0, what, ": unexpected key '", key, "' (expected '", prefix, "<k>.')");
    const size_t dot = key.find('.', prefix.size());
    GR_CHECK(dot != std::string::npos, what, ": malformed key '", key, "'");
    const size_t k = std::stoul(key.substr(prefix.size(), dot - prefix.size()));
    GR_CHECK(k < optimizers.size(), what, ": state for optimizer ", k, " but there are ", optimizers.size(),
             " (another model or bucket layout?)");
    parts[k].insert(key.substr(dot + 1), t);
  }
  for (size_t k = 0; k < optimizers.size(); ++k) optimizers[k]->load_state_dict(parts[k]);
}

int64_t Reducer::gradient_bytes() const {
  int64_t bytes = 0;
  for (const Tensor& p : params_)
    if (p.grad().defined()) bytes += static_cast<int64_t>(p.grad().nbytes());
  for (const Bucket& b : buckets_) {
    if (b.buffer.defined()) bytes += static_cast<int64_t>(b.buffer.nbytes());
    if (b.shard.grad.defined()) bytes += static_cast<int64_t>(b.shard.grad.nbytes());
  }
  return bytes;
}

void Reducer::step_completed_buckets() {
  while (next_step_ < next_bucket_ && buckets_[next_step_].work->is_completed()) {
    step_bucket(next_step_++);
    launch_gathers();
  }
}

void Reducer::step_bucket(size_t k) {
  Bucket& b = buckets_[k];
  // Returns at once for a completed collective; on NCCL it orders this stream after it.
  wait_for(b.work, *group_, "DistributedDataParallel",
           (options_.shard_gradients ? "the reduce-scatter of bucket " : "the all-reduce of bucket ") + std::to_string(k));
  b.step_start_ns = profiler::now_ns();
  NoGradGuard no_grad;
  if (options_.shard_gradients) {
    // This rank's slice [lo, lo + elems) of the bucket's parameters, then one step on it.
    const int64_t lo = group_->rank() * b.shard.elems, hi = lo + b.shard.elems;
    for (size_t s = 0; s < b.params.size(); ++s) {
      const Tensor& p = params_[b.params[s]];
      const int64_t from = std::max(lo, b.offsets[s]), to = std::min(hi, b.offsets[s] + p.numel());
      if (from < to)
        native::copy_(b.shard.param.narrow(0, from - lo, to - from), p.reshape({-1}).narrow(0, from - b.offsets[s], to - from));
    }
    b.shard.param.mutable_grad() = b.shard.grad;
    b.shard.optimizer->step();
    b.buffer = Tensor();  // the gradients of the other slices are not needed any more
    b.views.clear();
  } else {
    for (size_t s = 0; s < b.params.size(); ++s) {
      const size_t i = b.params[s];
      Tensor& grad = params_[i].mutable_grad();
      grad = b.views[s];
      param_optimizers_[i]->step();
      grad = Tensor();
    }
  }
  b.step_end_ns = profiler::now_ns();
  b.stepped = true;
}

// See Note [Gradient sharding]: the all-gathers of the buckets stepped so far, in bucket
// order, once every reduce-scatter has been issued; with gather_in_forward all of them at
// once, in forward order, when the last bucket is stepped (Note [Gathers in forward]).
void Reducer::launch_gathers() {
  if (!options_.shard_gradients || group_->size() == 1 || next_bucket_ < buckets_.size()) return;
  if (options_.gather_in_forward) {
    if (next_step_ < buckets_.size()) return;
    for (; next_gather_ < buckets_.size(); ++next_gather_) launch_gather(buckets_.size() - 1 - next_gather_);
    return;
  }
  for (; next_gather_ < next_step_; ++next_gather_) launch_gather(next_gather_);
}

// Every bucket's updated slice, gathered into every rank's parameters, buckets in order;
// with gather_in_forward only launched here, and waited by the next forward.
void Reducer::gather_parameters() {
  if (group_->size() == 1) {
    // The one shard is the whole bucket: its values go straight back.
    NoGradGuard no_grad;
    for (Bucket& b : buckets_)
      for (size_t s = 0; s < b.params.size(); ++s) {
        const Tensor& p = params_[b.params[s]];
        native::copy_(p, b.shard.param.narrow(0, b.offsets[s], p.numel()).view(p.sizes()));
      }
    return;
  }
  launch_gathers();  // the last ones: finalize_backward has stepped every bucket
  if (!options_.gather_in_forward) wait_all_gathers();
}

}  // namespace gr::distributed
