// The end of a Reducer iteration: wait for every bucket's collective, write the averaged
// gradients back (or point .grad at the bucket views; with the optimizer in backward, step
// what is left and, sharded, all-gather the parameters), and count the iteration.
#include "autograd/grad_mode.h"
#include "core/native/copy/copy.h"
#include "core/profiler.h"
#include "distributed/ddp/control_tensor.h"
#include "distributed/ddp/reducer.h"

namespace gr::distributed {

void Reducer::finalize_backward() {
  const int64_t wait_start = profiler::now_ns();
  {
    profiler::ScopedEvent span("DDP wait", "ddp");
    for (size_t k = 0; k < buckets_.size(); ++k) {
      if (step_factory_ && next_step_ == k) {
        step_bucket(next_step_++);  // waits for it; Note [Optimizer in backward]
        launch_gathers();           // its parameters' all-gather; Note [Gradient sharding]
        continue;
      }
      wait_for(buckets_[k].work, *group_, "DistributedDataParallel", "the all-reduce of bucket " + std::to_string(k));
    }
    if (used_work_)
      wait_for(used_work_, *group_, "DistributedDataParallel", "the all-reduce of the used-parameter map");
    if (options_.shard_gradients) gather_parameters();  // Note [Gradient sharding]
  }
  const int64_t wait_end = profiler::now_ns();
  if (!step_factory_) write_back_gradients();
  record_iteration(wait_start, wait_end);
  end_iteration();
}

void Reducer::write_back_gradients() {
  NoGradGuard no_grad;
  const std::vector<int64_t> used = used_work_ ? host_values(used_global_) : std::vector<int64_t>();
  for (Bucket& b : buckets_)
    for (size_t s = 0; s < b.params.size(); ++s) {
      const size_t i = b.params[s];
      if (!used.empty() && !used[i]) continue;  // no rank produced a gradient: leave .grad alone
      Tensor& grad = params_[i].mutable_grad();
      if (options_.gradient_as_bucket_view) {
        if (grad.unsafe_impl() != b.views[s].unsafe_impl()) grad = b.views[s];
      } else if (grad.defined()) {
        native::copy_(grad, b.views[s]);
      } else {
        grad = native::clone(b.views[s]);
      }
    }
}

// For the error paths and the destructor: whatever was launched finishes (its buffers are
// ours), and its errors are not this caller's to report.
void Reducer::wait_launched_quietly() {
  for (Bucket& b : buckets_)
    for (const WorkPtr& work : {b.work, b.shard.gather})
      if (work) try {
          work->wait(group_->timeout());
        } catch (...) {
        }
  if (used_work_) try {
      used_work_->wait(group_->timeout());
    } catch (...) {
    }
}

void Reducer::end_iteration() {
  phase_ = Phase::Idle;
  ++iteration_;
}

}  // namespace gr::distributed
