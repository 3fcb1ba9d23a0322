// DDP's Reducer: bucket layout, the per-parameter hook, in-order asynchronous launches, the
// end-of-backward wait and write-back, unused parameters, bucket rebuild, join's shadow
// iterations. See Note [DDP buckets] in reducer.h and docs/ddp-internals.md.
#include "distributed/reducer.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <numeric>
#include <sstream>
#include <unordered_set>

#include "autograd/accumulate_grad.h"
#include "autograd/engine.h"
#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "core/factory.h"
#include "core/native/copy.h"
#include "core/native/elementwise.h"
#include "core/profiler.h"
#include "distributed/control_tensor.h"
#include "distributed/flat_buffer.h"
#include "distributed/process_group_debug.h"

namespace gr::distributed {

namespace {

constexpr const char* kDDP = "DistributedDataParallel";

double ms_between(int64_t from_ns, int64_t to_ns) { return (to_ns - from_ns) * 1e-6; }



WorkPtr compress_hook(ProcessGroup& group, GradBucket& bucket, ScalarType dtype) {
  Tensor compressed = native::to_dtype(bucket.buffer, dtype);
  WorkPtr work = group.allreduce(compressed, ReduceOp::Sum);
  Tensor dst = bucket.buffer;
  work->then([compressed, dst] { native::copy_(dst, compressed); });
  return work;
}

bool same_tensor(const Tensor& a, const Tensor& b) { return a.defined() && a.unsafe_impl() == b.unsafe_impl(); }

}  // namespace

bool ddp_info_logging() { return debug_level() != DebugLevel::Off; }

WorkPtr allreduce_hook(ProcessGroup& group, GradBucket& bucket) { return group.allreduce(bucket.buffer, ReduceOp::Sum); }
WorkPtr fp16_compress_hook(ProcessGroup& group, GradBucket& bucket) { return compress_hook(group, bucket, kFloat16); }
WorkPtr bf16_compress_hook(ProcessGroup& group, GradBucket& bucket) { return compress_hook(group, bucket, kBFloat16); }

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
  // Collectives still in flight write into our buffers: let them finish first.
  for (Bucket& b : buckets_)
    if (b.work) try {
        b.work->wait(group_->timeout());
      } catch (...) {
      }
}

void Reducer::build_buckets(const std::vector<size_t>& order, bool reverse) {
  // Cut each dtype's parameters, in `order`, into buckets; the first bucket of each dtype
  // has the smaller limit.
  struct Open {
    std::vector<size_t> params;
    int64_t bytes = 0;
    bool first = true;
  };
  std::map<std::pair<int, std::string>, Open> open;
  std::vector<std::vector<size_t>> closed;
  for (size_t i : order) {
    const Tensor& p = params_[i];
    Open& o = open[{static_cast<int>(p.scalar_type()), p.device().str()}];
    o.params.push_back(i);
    o.bytes += static_cast<int64_t>(p.nbytes());
    if (o.bytes >= (o.first ? options_.first_bucket_bytes : options_.bucket_bytes)) {
      closed.push_back(std::move(o.params));
      o = Open{{}, 0, false};
    }
  }
  for (auto& [key, o] : open)
    if (!o.params.empty()) closed.push_back(std::move(o.params));
  // Buckets in the order of their earliest parameter, so they become ready one after another.
  std::vector<size_t> position(params_.size());
  for (size_t k = 0; k < order.size(); ++k) position[order[k]] = k;
  std::sort(closed.begin(), closed.end(), [&](const auto& a, const auto& b) { return position[a[0]] < position[b[0]]; });
  if (reverse) std::reverse(closed.begin(), closed.end());

  // Let earlier collectives finish before their buffers go away.
  for (Bucket& b : buckets_)
    if (b.work) wait_for(b.work, *group_, kDDP, "a bucket all-reduce");
  buckets_.clear();
  bucket_of_.assign(params_.size(), 0);
  slot_of_.assign(params_.size(), 0);
  for (size_t k = 0; k < closed.size(); ++k) {
    Bucket b;
    b.params = closed[k];
    TensorList members;
    for (size_t i : b.params) members.push_back(params_[i]);
    const FlatBuffer flat(members, /*zero=*/true);
    b.buffer = flat.flat();
    b.views = flat.views();
    for (size_t s = 0; s < b.params.size(); ++s) {
      const size_t i = b.params[s];
      bucket_of_[i] = k;
      slot_of_[i] = s;
      if (options_.gradient_as_bucket_view) {
        // An existing gradient moves into the bucket; from now on .grad is the bucket view.
        Tensor& grad = params_[i].mutable_grad();
        if (grad.defined()) {
          native::copy_(b.views[s], grad);
          grad = b.views[s];
        }
      }
    }
    b.pending = b.params.size();
    buckets_.push_back(std::move(b));
  }
}

void Reducer::reset_iteration_state() {
  std::fill(ready_.begin(), ready_.end(), 0);
  std::fill(used_.begin(), used_.end(), 0);
  for (Bucket& b : buckets_) {
    b.pending = b.params.size();
    b.work.reset();
    b.done_ns.reset();
    b.ready_ns = b.launch_ns = b.first_ready_ns = 0;
  }
  next_bucket_ = 0;
  finalize_queued_ = false;
  used_work_.reset();
  first_ready_ns_ = last_ready_ns_ = 0;
}

void Reducer::set_comm_hook(CommHook hook) {
  GR_CHECK(hook != nullptr, "DistributedDataParallel::register_comm_hook: the hook is empty");
  GR_CHECK(iteration_ == 0 && !expect_finalize_,
           "DistributedDataParallel::register_comm_hook: register the hook before the first forward");
  hook_ = std::move(hook);
}

void Reducer::prepare_for_forward() {
  if (expect_finalize_) {
    // A backward started, but not every parameter got a gradient, so some buckets were
    // never launched: every rank stops here rather than mixing up later collectives.
    std::vector<size_t> missing;
    for (size_t i = 0; i < params_.size(); ++i)
      if (!ready_[i]) missing.push_back(i);
    wait_launched();
    expect_finalize_ = false;
    armed_ = false;
    reset_iteration_state();
    GR_ERROR("DistributedDataParallel: expected to have finished reduction in the prior iteration before starting "
             "a new one. The module has parameters that did not receive a gradient in that backward pass on rank ",
             group_->rank(), ": ", names_of(missing),
             ". Pass DistributedDataParallelOptions().find_unused_parameters(true) if some parameters are "
             "legitimately unused in an iteration, or make sure every forward output takes part in the loss.");
  }
  if (finalize_queued_ && !finalized_) finalize_backward();  // every bucket was ready without a backward
  const bool may_rebuild = !options_.find_unused_parameters || options_.static_graph;
  if (!rebuilt_ && may_rebuild && completed_iterations_ >= 1) rebuild_buckets();
}

void Reducer::prepare_for_backward(const TensorList& outputs) {
  reset_iteration_state();
  finalized_ = false;
  armed_ = true;
  if (!options_.find_unused_parameters) return;
  std::vector<size_t> unused;
  if (options_.static_graph && static_unused_known_) {
    unused = static_unused_;
  } else {
    unused = unreached_parameters(outputs);
    if (options_.static_graph) static_unused_ = unused, static_unused_known_ = true;
  }
  for (size_t i : unused) {
    native::fill_(buckets_[bucket_of_[i]].views[slot_of_[i]], 0);
    mark_ready(i, /*from_hook=*/false);
  }
}

std::vector<size_t> Reducer::unreached_parameters(const TensorList& outputs) const {
  std::unordered_set<const TensorImpl*> reached;
  std::unordered_set<const autograd::Node*> seen;
  std::vector<autograd::Node*> stack;
  for (const Tensor& o : outputs) {
    if (!o.defined() || !o.requires_grad()) continue;
    if (o.grad_fn()) {
      if (seen.insert(o.grad_fn().get()).second) stack.push_back(o.grad_fn().get());
    } else {
      reached.insert(o.unsafe_impl());
    }
  }
  while (!stack.empty()) {
    autograd::Node* node = stack.back();
    stack.pop_back();
    if (auto* acc = dynamic_cast<autograd::AccumulateGrad*>(node)) reached.insert(acc->variable().unsafe_impl());
    for (const autograd::Edge& e : node->next_edges())
      if (e.node && seen.insert(e.node.get()).second) stack.push_back(e.node.get());
  }
  std::vector<size_t> unused;
  for (size_t i = 0; i < params_.size(); ++i)
    if (!reached.count(params_[i].unsafe_impl())) unused.push_back(i);
  return unused;
}

void Reducer::on_gradient_ready(size_t index) {
  if (!armed_) return;  // no_sync, or a backward DDP's forward did not prepare
  if (!expect_finalize_) {
    expect_finalize_ = true;
    first_ready_ns_ = profiler::now_ns();
  }
  GR_CHECK(!ready_[index], "DistributedDataParallel: parameter ", names_[index],
           " was marked ready twice in one iteration: its gradient hook ran twice in one backward pass (rank ",
           group_->rank(),
           "). Typical causes: the parameter is shared by several modules wrapped by different DDPs, it is used in "
           "a reentrant backward, or backward ran twice on one forward (retain_graph); for gradient accumulation "
           "use no_sync().");
  used_[index] = 1;
  Tensor& grad = params_[index].mutable_grad();
  Tensor& view = buckets_[bucket_of_[index]].views[slot_of_[index]];
  NoGradGuard no_grad;
  if (!same_tensor(grad, view)) {
    native::copy_(view, grad);
    if (options_.gradient_as_bucket_view) grad = view;
  }
  // Divide before summing (keeps float16 sums in range); the all-reduce then gives the mean.
  if (group_->size() > 1) native::mul_(view, native::wrapped_scalar(view, 1.0 / group_->size()));
  mark_ready(index, /*from_hook=*/true);
}

void Reducer::mark_ready(size_t index, bool from_hook) {
  ready_[index] = 1;
  const int64_t now = profiler::now_ns();
  last_ready_ns_ = now;
  if (from_hook && completed_iterations_ == 0) ready_order_.push_back(index);
  Bucket& b = buckets_[bucket_of_[index]];
  if (b.pending == b.params.size()) b.first_ready_ns = now;
  if (--b.pending == 0) b.ready_ns = now;
  // Strictly in bucket order: every rank must issue the same collectives in the same order.
  while (next_bucket_ < buckets_.size() && buckets_[next_bucket_].pending == 0) launch(next_bucket_++);
  if (next_bucket_ == buckets_.size() && !finalize_queued_) {
    finalize_queued_ = true;
    if (autograd::in_backward()) autograd::queue_callback([this] { finalize_backward(); });
  }
}

void Reducer::launch(size_t k) {
  Bucket& b = buckets_[k];
  b.launch_ns = profiler::now_ns();
  GradBucket gb;
  gb.index = k;
  gb.buffer = b.buffer;
  for (size_t i : b.params) gb.parameter_names.push_back(names_[i]);
  gb.is_last = k + 1 == buckets_.size();
  b.work = hook_(*group_, gb);
  GR_CHECK(b.work != nullptr, "DistributedDataParallel: the communication hook returned no Work for bucket ", k);
  auto done = std::make_shared<int64_t>(0);
  b.done_ns = done;
  b.work->then([done] { *done = profiler::now_ns(); });
  if (k + 1 == buckets_.size() && options_.find_unused_parameters) {
    // Which parameters got a gradient anywhere: a parameter unused on every rank keeps its
    // .grad. On the parameters' device: a backend of device tensors (nccl) refuses CPU ones.
    used_global_ = control_tensor(std::vector<int64_t>(used_.begin(), used_.end()), params_[0].device());
    used_work_ = group_->allreduce(used_global_, ReduceOp::Max);
  }
}

void Reducer::wait_launched() {
  for (size_t k = 0; k < buckets_.size(); ++k)
    if (buckets_[k].work) {
      try {
        buckets_[k].work->wait(group_->timeout());
      } catch (...) {
      }
    }
  if (used_work_) try {
      used_work_->wait(group_->timeout());
    } catch (...) {
    }
}

void Reducer::finalize_backward() {
  const int64_t wait_start = profiler::now_ns();
  {
    profiler::ScopedEvent span("DDP wait", "ddp");
    for (size_t k = 0; k < buckets_.size(); ++k)
      wait_for(buckets_[k].work, *group_, kDDP, "the all-reduce of bucket " + std::to_string(k));
    if (used_work_) wait_for(used_work_, *group_, kDDP, "the all-reduce of the used-parameter map");
  }
  const int64_t wait_end = profiler::now_ns();
  NoGradGuard no_grad;
  const std::vector<int64_t> used_host = used_work_ ? host_values(used_global_) : std::vector<int64_t>();
  const int64_t* used = used_work_ ? used_host.data() : nullptr;
  for (Bucket& b : buckets_)
    for (size_t s = 0; s < b.params.size(); ++s) {
      const size_t i = b.params[s];
      if (used && !used[i]) continue;  // no rank produced a gradient: leave .grad alone
      Tensor& grad = params_[i].mutable_grad();
      if (options_.gradient_as_bucket_view) {
        if (!same_tensor(grad, b.views[s])) grad = b.views[s];
      } else if (grad.defined()) {
        native::copy_(grad, b.views[s]);
      } else {
        grad = native::clone(b.views[s]);
      }
    }
  // Statistics, logs and trace spans.
  IterationStats st;
  st.iteration = iteration_;
  st.forward_ms = forward_ms_;
  st.backward_ms = first_ready_ns_ ? ms_between(first_ready_ns_, last_ready_ns_) : 0;
  st.wait_ms = ms_between(wait_start, wait_end);
  for (size_t k = 0; k < buckets_.size(); ++k) {
    const Bucket& b = buckets_[k];
    const int64_t done = b.done_ns && *b.done_ns ? *b.done_ns : wait_end;
    st.communication_ms += ms_between(b.launch_ns, done);
    if (profiler::enabled()) {
      if (b.first_ready_ns)
        profiler::record("bucket " + std::to_string(k) + " gradients", "ddp", b.first_ready_ns, b.ready_ns, "buckets");
      profiler::record("allreduce bucket " + std::to_string(k), "comm", b.launch_ns, done, "comm");
    }
  }
  last_stats_ = st;
  if (ddp_info_logging()) log_iteration();
  expect_finalize_ = false;
  armed_ = false;
  finalized_ = true;
  ++iteration_;
  ++completed_iterations_;
}

void Reducer::shadow_iteration() {
  reset_iteration_state();
  finalized_ = false;
  for (size_t k = 0; k < buckets_.size(); ++k) {
    native::fill_(buckets_[k].buffer, 0);
    buckets_[k].pending = 0;
  }
  for (size_t k = 0; k < buckets_.size(); ++k) launch(k);
  for (size_t k = 0; k < buckets_.size(); ++k)
    wait_for(buckets_[k].work, *group_, kDDP, "a joined rank's shadow all-reduce of bucket " + std::to_string(k));
  if (used_work_) wait_for(used_work_, *group_, kDDP, "a joined rank's shadow all-reduce of the used-parameter map");
  reset_iteration_state();
  finalized_ = true;
  ++iteration_;
  ++completed_iterations_;
}

void Reducer::rebuild_buckets() {
  // Rank 0's observed order decides: every rank must end up with the same buckets.
  const int64_t n = static_cast<int64_t>(params_.size());
  std::vector<int64_t> order;
  if (group_->rank() == 0) {
    std::vector<char> seen(params_.size(), 0);
    for (size_t i : ready_order_)
      if (!seen[i]) {
        seen[i] = 1;
        order.push_back(static_cast<int64_t>(i));
      }
    for (size_t i = 0; i < params_.size(); ++i)  // parameters that never got a gradient last
      if (!seen[i]) order.push_back(static_cast<int64_t>(i));
  } else {
    order.assign(params_.size(), -1);
  }
  Tensor sent = control_tensor(order, params_[0].device());
  wait_for(group_->broadcast(sent, 0), *group_, kDDP, "the broadcast of the bucket order");
  const std::vector<int64_t> o = host_values(sent);
  std::vector<size_t> observed(params_.size());
  std::vector<char> check(params_.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    GR_CHECK(o[k] >= 0 && o[k] < n && !check[o[k]], "DistributedDataParallel: rank 0 sent an invalid bucket order");
    check[o[k]] = 1;
    observed[k] = static_cast<size_t>(o[k]);
  }
  build_buckets(observed, /*reverse=*/false);
  rebuilt_ = true;
  ready_order_.clear();
  if (ddp_info_logging()) std::fprintf(stderr, "%s", layout_string().c_str());
}

std::vector<std::vector<size_t>> Reducer::bucket_indices() const {
  std::vector<std::vector<size_t>> out;
  for (const Bucket& b : buckets_) out.push_back(b.params);
  return out;
}

std::vector<int64_t> Reducer::bucket_bytes() const {
  std::vector<int64_t> out;
  for (const Bucket& b : buckets_) out.push_back(static_cast<int64_t>(b.buffer.nbytes()));
  return out;
}

std::string Reducer::layout_string() const {
  std::ostringstream out;
  out << "[rank " << group_->rank() << "] DDP buckets" << (rebuilt_ ? " (rebuilt in the observed gradient order)" : "")
      << ": " << buckets_.size() << " bucket(s), " << params_.size() << " parameters\n";
  for (size_t k = 0; k < buckets_.size(); ++k) {
    const Bucket& b = buckets_[k];
    out << "[rank " << group_->rank() << "]   bucket " << k << ": " << b.buffer.nbytes() << " bytes "
        << b.buffer.scalar_type() << ", " << b.params.size() << " parameter(s): " << names_of(b.params) << "\n";
  }
  return out.str();
}

std::string Reducer::names_of(const std::vector<size_t>& indices) const {
  std::string out;
  for (size_t k = 0; k < indices.size(); ++k) {
    if (k == 12 && indices.size() > 13) {
      out += ", ... (" + std::to_string(indices.size() - 12) + " more)";
      break;
    }
    out += (k ? ", " : "") + names_[indices[k]];
  }
  return out;
}

void Reducer::log_iteration() const {
  // Every iteration for the first ten, then every hundredth.
  if (iteration_ >= 10 && iteration_ % 100 != 0) return;
  const IterationStats& s = last_stats_;
  std::fprintf(stderr,
               "[rank %d] DDP iteration %lld: forward %.2f ms, backward compute %.2f ms, communication %.2f ms "
               "(%zu bucket(s)), wait after backward %.2f ms\n",
               group_->rank(), static_cast<long long>(s.iteration), s.forward_ms, s.backward_ms, s.communication_ms,
               buckets_.size(), s.wait_ms);
}

}  // namespace gr::distributed
