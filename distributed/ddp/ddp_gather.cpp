// DDP's gather_in_forward (ZeRO-2): the sharded parameters' all-gathers left in flight by
// backward and waited for by the next forward, module by module, through forward pre-hooks
// on the modules that own the parameters. See Note [Gathers in forward].
#include <algorithm>
#include <unordered_map>

#include "distributed/ddp/ddp.h"

namespace gr::nn::parallel {

// Note [Gathers in forward]
// With shard_gradients, backward ends with every rank holding only its updated slice of
// each bucket; the parameters are all-gathered (Note [Gradient sharding], reducer_step.cpp).
// With gather_in_forward, backward returns once the last gather is *launched*: the gathers
// are issued all at once when the last bucket is stepped, in forward order (the last
// bucket, which holds the first-registered parameters, first), so the first layers'
// parameters arrive first. The next forward waits for them piecewise:
//  - Hooks. The constructor registers a forward pre-hook (Module::register_forward_pre_hook)
//    on every module that directly owns parameters of a bucket; it waits for exactly the
//    buckets holding that module's own parameters and copies them in (Reducer::wait_gathers,
//    bucket by bucket, each bucket buffer freed once copied). A hook fires only when the
//    module is called through its holder (`fc1(x)`), not `fc1->forward(x)`.
//  - Learning which hooks fire. Each DDP forward records which owners' hooks fired; an
//    owner is *reliable* once its hook has fired in every DDP forward so far. At the start
//    of a forward (pre_forward) the buckets of every owner that is not reliable are waited
//    for up front; before any forward has been seen, all of them. So a child called as
//    `child->forward(x)`, or one whose parameters its parent reads itself (the wrapped
//    model's own parameters are always such: DDP calls its forward directly), is never
//    stale, and a module skipped in one forward stays waited-up-front from then on.
//  - (a) At the end of DDP's forward every gather still in flight is waited for: anything
//    after the forward (the backward's collectives, no_sync micro-steps, evaluation, a
//    checkpoint) sees current parameters, and the bucket buffers are free for backward.
//    Waiting issues no collective, so the collective order stays the same on every rank
//    whichever hooks fired where.
//  - (b) Whatever reads the model through DDP between backward and the next forward waits
//    first: module(), parameters(), named_parameters(), state_dict() (a state_dict pre-hook
//    on DDP and on the wrapped model, so capture_snapshot and load_state_dict, and with it
//    restore_snapshot, on either are safe: a load never gets overwritten by an older gather),
//    train()/eval() on DDP, optimizer_state_dict() and load_optimizer_state_dict(), and the
//    destructor (the model outlives its wrapper). The wrapped model's own forward pre-hook
//    waits for everything, so an evaluation `model(x)` through the bare model's holder is
//    safe too. wait_for_parameters() does it by hand.
//  - Buffers. broadcast_buffers would put a buffer broadcast at the start of every forward,
//    queued behind the gathers, and so wait for all of them before the first layer. With
//    gather_in_forward the broadcast is issued at the end of the previous forward instead
//    (the buffers change only in forward; what rank 0 has then is what it would send at
//    the next one) and finished (copied out) at the start of the next forward, or earlier by
//    wait_for_parameters. Every rank issues it at the same place, so the collective order is
//    unchanged; the first forward broadcasts as before.
// What stays unsafe, and is not detected: between backward and the next forward, reading a
// parameter straight from the bare model (`model->fc1->weight`, model->named_parameters(),
// model->forward(x), an optimizer built on the bare model's tensors reading them) before
// wait_for_parameters(); and, inside a forward, a module reading another module's parameter
// before that module's hook has fired in the same forward when the other module's hook fired
// in every earlier forward too (a parent reading a child's weight before calling the child,
// weights tied to a module called later). Such models should keep gather_in_forward off.
// (Sometimes it shows anyway: when the late copy lands on a parameter autograd has saved for
// backward, backward fails with the in-place version error, as a test that removed the
// up-front wait saw; a read under no_grad, as in an evaluation, saves nothing and goes
// unnoticed.)

void DistributedDataParallelBase::install_gather_hooks(const TensorList& params) {
  // Bucket of each parameter DDP reduces (params: the Reducer's list, in its order).
  std::unordered_map<const TensorImpl*, size_t> bucket_of;
  const std::vector<std::vector<size_t>> buckets = reducer_->bucket_indices();
  for (size_t k = 0; k < buckets.size(); ++k)
    for (size_t i : buckets[k]) bucket_of[params[i].unsafe_impl()] = k;
  for (const std::shared_ptr<Module>& m : module_->modules()) {
    GatherOwner owner{m, {}};
    for (const auto& [name, p] : m->own_parameters()) {
      auto it = p.defined() ? bucket_of.find(p.unsafe_impl()) : bucket_of.end();
      if (it != bucket_of.end() && std::find(owner.buckets.begin(), owner.buckets.end(), it->second) == owner.buckets.end())
        owner.buckets.push_back(it->second);
    }
    if (owner.buckets.empty()) continue;
    const size_t j = gather_owners_.size();
    gather_owners_.push_back(std::move(owner));
    gather_hooks_.push_back(m->register_forward_pre_hook([this, j](Module&) {
      GatherOwner& o = gather_owners_[j];
      if (in_forward_) o.fired = true;
      reducer_->wait_gathers(o.buckets);
    }));
  }
  // The bare model called through its holder (an evaluation), and any state_dict.
  gather_hooks_.push_back(module_->register_forward_pre_hook([this](Module&) { wait_for_parameters(); }));
  gather_hooks_.push_back(module_->register_state_dict_pre_hook([this](const Module&) { wait_for_parameters(); }));
  gather_hooks_.push_back(register_state_dict_pre_hook([this](const Module&) { wait_for_parameters(); }));
}

void DistributedDataParallelBase::remove_gather_hooks() {
  for (RemovableHandle& h : gather_hooks_) h.remove();
  gather_hooks_.clear();
}

void DistributedDataParallelBase::wait_for_parameters() {
  // Finished, not forgotten: the next forward still counts it as its broadcast.
  if (pending_buffers_) finish_buffer_broadcast(/*consume=*/false);
  if (reducer_) reducer_->wait_all_gathers();
}

void DistributedDataParallelBase::gather_before_forward() {
  if (reducer_->gathers_pending()) {
    if (!owners_learned_) {
      reducer_->wait_all_gathers();
    } else {
      std::vector<size_t> up_front;
      for (const GatherOwner& o : gather_owners_)
        if (!o.reliable) up_front.insert(up_front.end(), o.buckets.begin(), o.buckets.end());
      std::sort(up_front.begin(), up_front.end());
      up_front.erase(std::unique(up_front.begin(), up_front.end()), up_front.end());
      reducer_->wait_gathers(up_front);
    }
  }
  for (GatherOwner& o : gather_owners_) o.fired = false;
  in_forward_ = true;
}

void DistributedDataParallelBase::gather_after_forward() {
  in_forward_ = false;
  reducer_->wait_all_gathers();  // (a) in Note [Gathers in forward]
  for (GatherOwner& o : gather_owners_) o.reliable = (owners_learned_ ? o.reliable : true) && o.fired;
  owners_learned_ = true;
}

}  // namespace gr::nn::parallel
