// The root unit: the lazy init of its tree at the first forward (unit names, the units in
// order, the INFO log), the orders prefetch learns, and the end of each backward (leftover
// reductions, waits, reshards).
#include <cstdio>

#include "autograd/engine.h"
#include "core/profiler.h"
#include "distributed/backends/process_group_debug.h"
#include "distributed/fsdp/fsdp_unit.h"

namespace gr::distributed::fsdp {

// Note [FSDP iteration]
// The root is the unit no other unit claimed (fully_shard applied to an ancestor claims the
// units below it that have no parent yet). At the first forward of any unit of a tree, the
// root initialises the tree once (lazy_init, as FSDP2's lazy init at the root's first
// forward): it lists its units in pre-order of the module tree (itself first), names them by
// their module's qualified name ("" for the root) and their parameters by theirs, and logs the
// layout at GRADRING_DISTRIBUTED_DEBUG=INFO. The root keeps its parameters gathered from its
// forward to its backward (its backward starts right after its forward ends). The first
// pre-backward or gradient hook of a backward queues the root's end_of_backward on the
// autograd engine (autograd::queue_callback), which runs once the whole graph is processed:
// units that ran a forward with grad but whose post-backward did not run (parameters that got
// no gradient) reduce now, in unit order (the same on every rank); then every reduce-scatter
// is waited for and added into the shards' .grad, and every unit is resharded.

void FSDPUnit::lazy_init() {
  if (root_) return;
  FSDPUnit* top = this;
  while (top->parent_) top = top->parent_;
  top->become_root();
}

std::vector<FSDPUnit*> FSDPUnit::name_tree() {
  std::vector<FSDPUnit*> tree;
  for (const auto& [qualified, m] : module_->named_modules()) {
    std::shared_ptr<FSDPUnit> unit = find_unit(m.get());
    if (!unit) continue;
    unit->name_ = qualified;
    const std::string prefix = qualified.empty() ? "" : qualified + ".";
    for (Param& p : unit->params_) p.name = prefix + p.local_name;
    // A read of a sharded parameter names it by its new name.
    if (unit->gather_ == Gather::None && !unit->params_.empty()) unit->unsharded_.release(unit->released_reason());
    tree.push_back(unit.get());
  }
  return tree;
}

void FSDPUnit::become_root() {
  units_ = name_tree();
  const bool detail = debug_level() == DebugLevel::Detail;
  for (size_t i = 0; i < units_.size(); ++i) {
    FSDPUnit* unit = units_[i];
    GR_CHECK(unit->group_ == group_, "fully_shard: unit '", unit->name_, "' is sharded over another process group "
             "than the root; every unit of one model must use the root's group");
    unit->root_ = this;
    unit->index_ = i;
    unit->detail_ = detail;
    unit->next_forward_ = unit->next_backward_ = nullptr;
  }
  forward_learned_ = backward_learned_ = false;
  forward_order_.clear();
  backward_order_.clear();
  if (debug_level() == DebugLevel::Off || group_->rank() != 0) return;
  int64_t total = 0, padded = 0;
  for (const FSDPUnit* u : units_)
    for (const Param& p : u->params_) total += p.numel(), padded += p.shard_numel() * group_->size();
  std::fprintf(stderr, "[rank %d] fully_shard: %zu unit(s), %lld parameter elements (%lld with padding) over %d rank(s)\n",
               group_->rank(), units_.size(), static_cast<long long>(total), static_cast<long long>(padded),
               group_->size());
  for (const FSDPUnit* u : units_)
    std::fprintf(stderr, "[rank %d]   unit '%s' (%s): %zu parameter(s), %lld elements per rank, gathered in %.*s\n",
                 group_->rank(), u->label().c_str(), u->module_->name().c_str(), u->params_.size(),
                 static_cast<long long>(u->shard_elems_), static_cast<int>(dtype_name(u->compute_dtype_).size()),
                 dtype_name(u->compute_dtype_).data());
}

void FSDPUnit::queue_end_of_backward() {
  if (end_queued_ || !autograd::in_backward()) return;
  end_queued_ = true;
  std::weak_ptr<FSDPUnit> weak = weak_from_this();
  autograd::queue_callback([weak] {
    if (auto root = weak.lock()) root->end_of_backward();
  });
}

void FSDPUnit::end_of_backward() {
  profiler::ScopedEvent span("FSDP end of backward", "fsdp");
  end_queued_ = false;
  for (FSDPUnit* u : units_)
    if (u->in_graph_ && !u->reduced_) u->post_backward();
  for (FSDPUnit* u : units_) u->finish_reduce();  // the reduce-scatters still in flight
  reducing_.clear();
  for (FSDPUnit* u : units_) {
    u->reshard();
    u->reset_backward_state();
  }
  if (!backward_learned_) learn_backward_order();
}

// Each unit's successor in the first forward's (backward's) order, by its first appearance.
void FSDPUnit::learn_forward_order() {
  forward_learned_ = true;
  for (size_t i = 0; i + 1 < forward_order_.size(); ++i)
    if (!forward_order_[i]->next_forward_ && forward_order_[i + 1] != forward_order_[i])
      forward_order_[i]->next_forward_ = forward_order_[i + 1];
  forward_order_.clear();
}

void FSDPUnit::learn_backward_order() {
  backward_learned_ = true;
  for (size_t i = 0; i + 1 < backward_order_.size(); ++i)
    if (!backward_order_[i]->next_backward_ && backward_order_[i + 1] != backward_order_[i])
      backward_order_[i]->next_backward_ = backward_order_[i + 1];
  backward_order_.clear();
}

void FSDPUnit::reset_backward_state() {
  in_graph_ = backward_started_ = reduced_ = false;
  pending_grads_ = grad_params_;
  next_bucket_ = 0;
  for (Param& p : params_) p.ready = false;
}

}  // namespace gr::distributed::fsdp
