// FSDPUnit: the sharded layout of a unit's parameters (Note [FSDP units]), this rank's flat
// shard built from rank 0's values, the check that every rank made the same unit, and the
// forward hooks.
#include "distributed/fsdp/fsdp_unit.h"

#include <algorithm>
#include <sstream>

#include "autograd/engine.h"
#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "core/factory.h"
#include "core/native/copy/copy.h"
#include "core/profiler.h"
#include "distributed/backends/init.h"
#include "distributed/ddp/control_tensor.h"

namespace gr::distributed::fsdp {

FSDPUnit::FSDPUnit(nn::Module& module, std::vector<std::pair<std::string, Tensor>> params,
                   const FullyShardOptions& options)
    : module_(&module),
      group_(options.group() ? options.group() : default_group()),
      reshard_after_forward_(options.reshard_after_forward()) {
  GR_CHECK(group_ != nullptr, "fully_shard: no process group (call init_process_group first, or pass "
                              "FullyShardOptions().group(g))");
  const int64_t n = group_->size();
  if (!params.empty()) {
    master_dtype_ = params[0].second.scalar_type();
    device_ = params[0].second.device();
  }
  for (const auto& [name, t] : params) {
    GR_CHECK(t.is_floating_point(), "fully_shard: parameter ", name, " of ", module.name(), " has dtype ",
             t.scalar_type(), "; only floating point parameters can be sharded");
    GR_CHECK(t.scalar_type() == master_dtype_ && t.device() == device_, "fully_shard: the parameters of one unit must "
             "share a dtype and a device, but ", params[0].first, " is ", master_dtype_, " on ", device_.str(), " and ",
             name, " is ", t.scalar_type(), " on ", t.device().str());
    GR_CHECK(t.is_leaf(), "fully_shard: parameter ", name, " is not a leaf");
    GR_CHECK(!t.storage().is_released(), "fully_shard: parameter ", name, " is already sharded by another unit "
             "(a parameter shared between units must belong to their common ancestor's unit)");
  }
  const MixedPrecisionPolicy& mp = options.mp_policy();
  compute_dtype_ = mp.param_dtype().value_or(master_dtype_);
  reduce_dtype_ = mp.reduce_dtype().value_or(compute_dtype_);
  GR_CHECK(is_floating_point(compute_dtype_) && is_floating_point(reduce_dtype_),
           "fully_shard: MixedPrecisionPolicy dtypes must be floating point, got param_dtype ", compute_dtype_,
           " and reduce_dtype ", reduce_dtype_);
  for (auto& [name, t] : params) {
    Param p;
    p.local_name = p.name = name;
    p.param = t;
    p.shape = t.sizes().vec();
    p.rows = t.dim() > 0 ? t.size(0) : 1;
    p.row_elems = 1;
    for (size_t d = 1; d < p.shape.size(); ++d) p.row_elems *= p.shape[d];
    p.shard_rows = (p.rows + n - 1) / n;
    p.shard_offset = shard_elems_;
    p.unsharded_offset = unsharded_elems_;
    shard_elems_ += p.shard_numel();
    unsharded_elems_ += p.numel();
    if (t.requires_grad()) ++grad_params_;
    params_.push_back(std::move(p));
  }
  pending_grads_ = grad_params_;
  buckets_ = make_buckets(options.reduce_scatter_bucket_cap_mb(), element_size(reduce_dtype_), "reduce_scatter_bucket_cap_mb");
  gather_pieces_ = make_buckets(options.all_gather_bucket_cap_mb(), element_size(compute_dtype_), "all_gather_bucket_cap_mb");
  check_same_units_everywhere();
  shard_parameters();
}

FSDPUnit::~FSDPUnit() {
  for (Param& p : params_)
    if (p.hook) p.param.remove_hook(p.hook);
  // A gather or reduce-scatter still in flight writes into our buffers.
  for (const WorkPtr& work : {gather_work_, reduce_work_}) {
    if (!work) continue;
    try {
      work->wait(group_->timeout());
    } catch (...) {
    }
  }
}

// DDP's model check, cheaply: a mismatch in the units' parameter counts, sizes or shapes
// fails on every rank instead of mixing up the broadcast below and every later collective.
void FSDPUnit::check_same_units_everywhere() const {
  if (group_->size() == 1 || params_.empty()) return;  // an empty unit issues no collective at all
  int64_t shapes = 0;
  for (const Param& p : params_) {
    int64_t h = static_cast<int64_t>(p.shape.size());
    for (int64_t s : p.shape) h = (h * 1000003 + s) % 2147483647;
    shapes = (shapes * 31 + h) % 2147483647;
  }
  const int64_t mine[] = {static_cast<int64_t>(params_.size()), unsharded_elems_, shapes};
  std::vector<int64_t> both;  // max of v and of -v: every rank equal iff max(v) == -max(-v)
  for (int64_t v : mine) {
    both.push_back(v);
    both.push_back(-v);
  }
  Tensor t = control_tensor(both, device_);
  wait_for(group_->allreduce(t, ReduceOp::Max), *group_, "fully_shard", "the unit check");
  const std::vector<int64_t> got = host_values(t);
  for (size_t i = 0; i < 3; ++i)
    GR_CHECK(got[2 * i] == -got[2 * i + 1], "fully_shard: the unit made of ", module_->name(), " differs between "
             "ranks: on rank ", group_->rank(), " it has ", params_.size(), " parameter(s) of ", unsharded_elems_,
             " elements, but another rank's has ", i == 0 ? "another parameter count" : i == 1 ? "another size" :
             "other shapes", ". Every rank must apply fully_shard to the same model's modules in the same order.");
}

// Rank 0's values win (broadcast, as DDP's constructor does); each rank keeps its rows.
void FSDPUnit::shard_parameters() {
  NoGradGuard no_grad;
  const TensorOptions master = TensorOptions(master_dtype_).device(device_);
  Tensor full = empty({unsharded_elems_}, master);
  for (const Param& p : params_)
    if (p.numel() > 0) native::copy_(full.narrow(0, p.unsharded_offset, p.numel()), p.param.reshape({-1}));
  if (group_->size() > 1 && unsharded_elems_ > 0)
    wait_for(group_->broadcast(full, 0), *group_, "fully_shard", "the broadcast of rank 0's parameters");
  shard_ = zeros({shard_elems_}, master);
  const int64_t r = group_->rank();
  for (Param& p : params_) {
    const int64_t lo = r * p.shard_rows, held = std::clamp<int64_t>(p.rows - lo, 0, p.shard_rows);
    if (held > 0)
      native::copy_(shard_.narrow(0, p.shard_offset, held * p.row_elems),
                    full.narrow(0, p.unsharded_offset + lo * p.row_elems, held * p.row_elems));
    std::vector<int64_t> local_shape = p.shape;
    if (local_shape.empty()) local_shape.push_back(1);
    local_shape[0] = p.shard_rows;
    p.local = make_view(shard_, local_shape, contiguous_strides(local_shape), p.shard_offset);
    p.local.set_requires_grad(p.param.requires_grad());
  }
  // The module's tensors become views of the unit's unsharded storage, released until the
  // first gather (Note [FSDP units]).
  unsharded_ = Storage::allocate(static_cast<size_t>(unsharded_elems_) * element_size(compute_dtype_), device_);
  account_bytes(static_cast<int64_t>(unsharded_.nbytes()));  // what the reshard below frees
  for (Param& p : params_) {
    TensorImpl* impl = p.param.unsafe_impl();
    impl->storage = unsharded_;
    impl->sizes = p.shape;
    impl->strides = contiguous_strides(p.shape);
    impl->offset = p.unsharded_offset;
    impl->dtype = compute_dtype_;
    if (impl->autograd) impl->autograd->grad = Tensor();
  }
  gather_ = Gather::Done;
  reshard();
}

std::string FSDPUnit::released_reason() const {
  std::ostringstream why;
  why << "fully_shard: this is a parameter of the unit "
      << (root_ == this || name_.empty() ? module_->name() : "'" + name_ + "' (" + module_->name() + ")")
      << ", which is sharded now: its parameters (";
  for (size_t i = 0; i < params_.size() && i < 3; ++i) why << (i ? ", " : "") << params_[i].name;
  if (params_.size() > 3) why << ", ...";
  why << ") hold no memory outside the unit's forward and backward. Call the module through its holder (module(x)) "
         "or a Sequential, whose forward pre-hook gathers them, not module->forward(x); read the shards through "
         "FSDPModule::parameters(), and build the optimizer on those.";
  return why.str();
}

void FSDPUnit::install_hooks() {
  // The pre-hook owns the unit (Note [FSDP units], ownership); the forward hook sees it weakly.
  std::shared_ptr<FSDPUnit> self = shared_from_this();
  std::weak_ptr<FSDPUnit> weak = self;
  module_hooks_.push_back(module_->register_forward_pre_hook([self](nn::Module&) { self->pre_forward(); }));
  module_hooks_.push_back(module_->register_forward_hook([weak](nn::Module&, const TensorList& outputs) {
    if (auto unit = weak.lock()) unit->post_forward(outputs);
  }));
  for (size_t i = 0; i < params_.size(); ++i)
    if (params_[i].param.requires_grad())
      params_[i].hook = params_[i].param.register_post_accumulate_grad_hook([this, i](Tensor&) { on_gradient_ready(i); });
}

void FSDPUnit::pre_forward() {
  lazy_init();
  if (autograd::in_backward()) {  // a recomputation (activation checkpointing): see Note [FSDP units]
    if (GradMode::is_enabled()) in_graph_ = true;  // its gradients are reduced in this backward
    unshard();
    return;
  }
  if (!root_->forward_learned_) root_->forward_order_.push_back(this);
  // Own gather, waited for, then the next unit's (Note [FSDP prefetch]).
  unshard();
  prefetch(forward_prefetch_, next_forward_);
  forward_start_ns_ = profiler::now_ns();
}

void FSDPUnit::post_forward(const TensorList& outputs) {
  if (autograd::in_backward()) return;  // a recomputation inside this unit's backward: keep everything
  bool backward_follows = false;
  if (GradMode::is_enabled()) {
    std::weak_ptr<FSDPUnit> weak = weak_from_this();
    for (const Tensor& t : outputs) {
      if (!t.defined() || !t.requires_grad() || !t.grad_fn()) continue;
      backward_follows = true;
      // Holds the unit weakly: the graph may outlive the module.
      t.grad_fn()->add_pre_hook(t.output_nr(), [weak](const Tensor&) {
        if (auto unit = weak.lock()) unit->pre_backward();
        return Tensor();
      });
    }
  }
  if (profiler::enabled()) profiler::record("forward " + label(), "fsdp", forward_start_ns_, profiler::now_ns(), "fsdp units");
  if (backward_follows) in_graph_ = true;
  const bool keep = backward_follows && (root_ == this || !reshard_after_forward_);
  if (!keep) reshard();
  if (root_ != this) return;
  if (!forward_learned_) learn_forward_order();
  // A forward with no backward to come (evaluation) leaves nothing gathered, prefetches included.
  if (!backward_follows)
    for (FSDPUnit* u : units_) u->reshard();
}

}  // namespace gr::distributed::fsdp
