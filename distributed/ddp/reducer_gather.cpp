// The Reducer's all-gathers of sharded parameters (ZeRO-2): one bucket's gather launched
// into its buffer, and waited for and copied into the parameters, either at the end of
// backward or, with gather_in_forward, by the forward that needs it (Note [Gradient
// sharding] in reducer_step.cpp, Note [Gathers in forward] in ddp_gather.cpp).
#include <algorithm>
#include <string>

#include "autograd/grad_mode.h"
#include "core/native/copy/copy.h"
#include "core/profiler.h"
#include "distributed/ddp/reducer.h"

namespace gr::distributed {

void Reducer::launch_gather(size_t k) {
  Bucket& b = buckets_[k];
  allocate_buffer(b);
  std::vector<Tensor> outputs;
  for (int r = 0; r < group_->size(); ++r) outputs.push_back(b.buffer.narrow(0, r * b.shard.elems, b.shard.elems));
  b.shard.gather_launch_ns = profiler::now_ns();
  b.shard.gather = group_->allgather(outputs, b.shard.param.detach());
  auto done = std::make_shared<int64_t>(0);
  b.shard.gather_done_ns = done;
  b.shard.gather->then([done] { *done = profiler::now_ns(); });
  ++pending_gathers_;
}

void Reducer::wait_gather(size_t k) {
  Bucket& b = buckets_[k];
  if (!b.shard.gather) return;
  const int64_t wait_start = profiler::now_ns();
  wait_for(b.shard.gather, *group_, "DistributedDataParallel", "the all-gather of bucket " + std::to_string(k));
  const int64_t wait_end = profiler::now_ns();
  if (profiler::enabled()) {
    const int64_t done = b.shard.gather_done_ns && *b.shard.gather_done_ns ? *b.shard.gather_done_ns : wait_end;
    profiler::record("allgather bucket " + std::to_string(k), "comm", b.shard.gather_launch_ns, done, "comm");
    // In forward: on the thread that waits (the forward's), so the trace shows what it cost.
    if (options_.gather_in_forward)
      profiler::record("DDP gather wait bucket " + std::to_string(k), "ddp", wait_start, wait_end);
  }
  NoGradGuard no_grad;
  for (size_t s = 0; s < b.params.size(); ++s) native::copy_(params_[b.params[s]], b.views[s]);
  b.shard.gather.reset();
  b.shard.gather_done_ns.reset();
  b.buffer = Tensor();
  b.views.clear();
  --pending_gathers_;
}

void Reducer::wait_gathers(const std::vector<size_t>& buckets) {
  if (pending_gathers_ == 0) return;  // the common case in a hook: nothing to copy, no allocation
  // In launch order: with gather_in_forward the last bucket went first.
  std::vector<size_t> order = buckets;
  if (options_.gather_in_forward) std::sort(order.rbegin(), order.rend());
  else std::sort(order.begin(), order.end());
  for (size_t k : order) wait_gather(k);
}

void Reducer::wait_all_gathers() {
  if (pending_gathers_ == 0) return;
  std::vector<size_t> all(buckets_.size());
  for (size_t k = 0; k < all.size(); ++k) all[k] = k;
  wait_gathers(all);
}

}  // namespace gr::distributed
