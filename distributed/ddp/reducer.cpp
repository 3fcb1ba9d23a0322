// DDP's Reducer: construction, arming for a backward (and the unused parameters), the
// per-parameter hook and the in-order launch of full buckets. See Note [DDP buckets] and
// Note [Reducer phases] in reducer.h.
#include "distributed/ddp/reducer.h"

#include <numeric>
#include <unordered_set>

#include "autograd/engine.h"
#include "autograd/grad_mode.h"
#include "autograd/graph_walk.h"
#include "core/error.h"
#include "core/native/copy/copy.h"
#include "core/native/elementwise/elementwise.h"
#include "core/profiler.h"
#include "distributed/ddp/control_tensor.h"

namespace gr::distributed {

namespace {

bool same_tensor(const Tensor& a, const Tensor& b) { return a.defined() && a.unsafe_impl() == b.unsafe_impl(); }

}  // namespace

Reducer::Reducer(TensorList params, std::vector<std::string> names, ProcessGroupPtr group,
                 const ReducerOptions& options)
    : params_(std::move(params)), names_(std::move(names)), group_(std::move(group)), options_(options) {
  GR_CHECK(group_ != nullptr, "DistributedDataParallel: the process group is null");
  GR_CHECK(params_.size() == names_.size(), "Reducer: ", params_.size(), " parameters but ", names_.size(), " names");
  GR_CHECK(!params_.empty(), "DistributedDataParallel: the module has no parameters that require grad");
  GR_CHECK(options_.bucket_bytes >= 0 && options_.first_bucket_bytes >= 0,
           "DistributedDataParallel: bucket sizes must be >= 0");
  for (size_t i = 0; i < params_.size(); ++i)
    GR_CHECK(params_[i].is_leaf() && params_[i].requires_grad(), "DistributedDataParallel: parameter ", names_[i],
             " must be a leaf that requires grad");
  // See Note [Gradient sharding]: what it cannot be combined with.
  GR_CHECK(!options_.shard_gradients || !options_.find_unused_parameters,
           "DistributedDataParallel: shard_gradients cannot be combined with find_unused_parameters (a parameter "
           "without a gradient would still be stepped with a zero one)");
  GR_CHECK(!options_.shard_gradients || !options_.gradient_as_bucket_view,
           "DistributedDataParallel: shard_gradients cannot be combined with gradient_as_bucket_view (each rank keeps "
           "only its shard of the gradients; the buckets are freed after their reduce-scatter)");
  GR_CHECK(!options_.gather_in_forward || options_.shard_gradients,
           "DistributedDataParallel: gather_in_forward needs shard_gradients (it leaves the all-gathers of the "
           "sharded parameters in flight for the next forward; without sharding there are none)");
  std::vector<size_t> order(params_.size());
  std::iota(order.begin(), order.end(), size_t{0});
  build_buckets(order, /*reverse=*/true);
  hook_ = allreduce_hook;
  for (size_t i = 0; i < params_.size(); ++i)
    hook_handles_.push_back(params_[i].register_post_accumulate_grad_hook([this, i](Tensor&) { on_gradient_ready(i); }));
  ready_.assign(params_.size(), 0);
  used_.assign(params_.size(), 0);
}

Reducer::~Reducer() {
  for (size_t i = 0; i < params_.size(); ++i) params_[i].remove_hook(hook_handles_[i]);
  wait_launched_quietly();  // collectives still in flight write into our buffers
}

void Reducer::reset_iteration_state() {
  std::fill(ready_.begin(), ready_.end(), 0);
  std::fill(used_.begin(), used_.end(), 0);
  for (Bucket& b : buckets_) {
    b.pending = b.params.size();
    b.work.reset();
    b.timeline = Timeline{};
    b.stepped = false;
    b.step_start_ns = b.step_end_ns = 0;
  }
  next_bucket_ = 0;
  next_step_ = 0;
  next_gather_ = 0;
  used_work_.reset();
  first_ready_ns_ = last_ready_ns_ = 0;
}

void Reducer::set_comm_hook(CommHook hook) {
  GR_CHECK(hook != nullptr, "DistributedDataParallel::register_comm_hook: the hook is empty");
  GR_CHECK(iteration_ == 0 && (phase_ == Phase::Idle || phase_ == Phase::Armed),
           "DistributedDataParallel::register_comm_hook: register the hook before the first forward");
  GR_CHECK(!options_.shard_gradients,
           "DistributedDataParallel::register_comm_hook: with shard_gradients every bucket is reduce-scattered; a "
           "communication hook (which reduces a whole bucket) cannot be used");
  hook_ = std::move(hook);
}

void Reducer::disarm() {
  if (phase_ == Phase::Armed) phase_ = Phase::Idle;
}

void Reducer::prepare_for_forward() {
  GR_CHECK(!options_.shard_gradients || step_factory_,
           "DistributedDataParallel: shard_gradients needs the optimizer in backward (each rank steps its shard of "
           "each bucket): call apply_optimizer_in_backward(optimizer_class<...>(options)) before the first forward");
  if (phase_ == Phase::Reducing) fail_unfinished_reduction();
  if (phase_ == Phase::Launched) finalize_backward();  // every bucket was ready without a backward
  // Sharded buckets keep their layout: the shards' optimizer state is laid out by it.
  const bool may_rebuild = (!options_.find_unused_parameters || options_.static_graph) && !options_.shard_gradients;
  if (!rebuilt_ && may_rebuild && iteration_ >= 1) rebuild_buckets();
}

// A backward started, but not every parameter got a gradient, so some buckets were never
// launched: every rank stops here rather than mixing up later collectives.
void Reducer::fail_unfinished_reduction() {
  std::vector<size_t> missing;
  for (size_t i = 0; i < params_.size(); ++i)
    if (!ready_[i]) missing.push_back(i);
  wait_launched_quietly();
  phase_ = Phase::Idle;
  reset_iteration_state();
  GR_ERROR("DistributedDataParallel: expected to have finished reduction in the prior iteration before starting "
           "a new one. The module has parameters that did not receive a gradient in that backward pass on rank ",
           group_->rank(), ": ", names_of(missing),
           ". Pass DistributedDataParallelOptions().find_unused_parameters(true) if some parameters are "
           "legitimately unused in an iteration, or make sure every forward output takes part in the loss.");
}

void Reducer::prepare_for_backward(const TensorList& outputs) {
  wait_all_gathers();  // DDP's forward has waited them (Note [Gathers in forward]); the buffers are reused
  reset_iteration_state();
  phase_ = Phase::Armed;
  if (!options_.find_unused_parameters) return;
  const std::vector<size_t> unused =
      options_.static_graph && static_unused_ ? *static_unused_ : unreached_parameters(outputs);
  if (options_.static_graph) static_unused_ = unused;
  for (size_t i : unused) {
    native::fill_(buckets_[bucket_of_[i]].views[slot_of_[i]], 0);
    mark_ready(i, /*from_hook=*/false);
  }
}

std::vector<size_t> Reducer::unreached_parameters(const TensorList& outputs) const {
  std::unordered_set<const TensorImpl*> reached;
  for (const Tensor& leaf : autograd::reachable_leaves(outputs)) reached.insert(leaf.unsafe_impl());
  std::vector<size_t> unused;
  for (size_t i = 0; i < params_.size(); ++i)
    if (!reached.count(params_[i].unsafe_impl())) unused.push_back(i);
  return unused;
}

void Reducer::on_gradient_ready(size_t index) {
  if (phase_ == Phase::Idle) return;  // no_sync, or a backward DDP's forward did not prepare
  if (phase_ == Phase::Armed) {
    phase_ = Phase::Reducing;
    first_ready_ns_ = profiler::now_ns();
  }
  GR_CHECK(!ready_[index], "DistributedDataParallel: parameter ", names_[index],
           " was marked ready twice in one iteration: its gradient hook ran twice in one backward pass (rank ",
           group_->rank(),
           "). Typical causes: the parameter is shared by several modules wrapped by different DDPs, it is used in "
           "a reentrant backward, or backward ran twice on one forward (retain_graph); for gradient accumulation "
           "use no_sync().");
  used_[index] = 1;
  Bucket& bucket = buckets_[bucket_of_[index]];
  if (!bucket.buffer.defined()) allocate_buffer(bucket);  // sharded buckets are freed after each iteration
  Tensor& grad = params_[index].mutable_grad();
  Tensor& view = bucket.views[slot_of_[index]];
  NoGradGuard no_grad;
  if (!same_tensor(grad, view)) {
    native::copy_(view, grad);
    if (options_.gradient_as_bucket_view) grad = view;
  }
  // Divide before summing (keeps float16 sums in range); the all-reduce then gives the mean.
  if (group_->size() > 1) native::mul_(view, native::wrapped_scalar(view, 1.0 / group_->size()));
  if (options_.shard_gradients) grad = Tensor();  // the bucket holds it now
  mark_ready(index, /*from_hook=*/true);
  if (step_factory_) step_completed_buckets();
}

void Reducer::mark_ready(size_t index, bool from_hook) {
  ready_[index] = 1;
  const int64_t now = profiler::now_ns();
  last_ready_ns_ = now;
  if (from_hook && iteration_ == 0) ready_order_.push_back(index);
  Bucket& b = buckets_[bucket_of_[index]];
  if (b.pending == b.params.size()) b.timeline.first_ready_ns = now;
  if (--b.pending == 0) b.timeline.ready_ns = now;
  // Strictly in bucket order: every rank must issue the same collectives in the same order.
  while (next_bucket_ < buckets_.size() && buckets_[next_bucket_].pending == 0) launch(next_bucket_++);
  if (next_bucket_ == buckets_.size() && phase_ != Phase::Launched) {
    phase_ = Phase::Launched;
    launch_gathers();  // the buckets already stepped (Note [Gradient sharding])
    if (autograd::in_backward()) autograd::queue_callback([this] { finalize_backward(); });
  }
}

void Reducer::launch(size_t k) {
  Bucket& b = buckets_[k];
  b.timeline.launch_ns = profiler::now_ns();
  if (options_.shard_gradients) {
    // See Note [Gradient sharding].
    std::vector<Tensor> inputs;
    for (int r = 0; r < group_->size(); ++r) inputs.push_back(b.buffer.narrow(0, r * b.shard.elems, b.shard.elems));
    b.work = group_->reduce_scatter(b.shard.grad, inputs, ReduceOp::Sum);
  } else {
    launch_hook(k);
  }
  auto done = std::make_shared<int64_t>(0);
  b.timeline.done_ns = done;
  b.work->then([done] { *done = profiler::now_ns(); });
  if (k + 1 == buckets_.size() && options_.find_unused_parameters) {
    // Which parameters got a gradient anywhere: a parameter unused on every rank keeps its
    // .grad.
    used_global_ = control_tensor(std::vector<int64_t>(used_.begin(), used_.end()), params_[0].device());
    used_work_ = group_->allreduce(used_global_, ReduceOp::Max);
  }
}

void Reducer::launch_hook(size_t k) {
  Bucket& b = buckets_[k];
  GradBucket gb;
  gb.index = k;
  gb.buffer = b.buffer;
  for (size_t i : b.params) gb.parameter_names.push_back(names_[i]);
  gb.is_last = k + 1 == buckets_.size();
  b.work = hook_(*group_, gb);
  GR_CHECK(b.work != nullptr, "DistributedDataParallel: the communication hook returned no Work for bucket ", k);
}

}  // namespace gr::distributed
