// The Reducer's statistics (IterationStats), trace spans (profiler) and
// GRADRING_DISTRIBUTED_DEBUG=INFO logs of each iteration.
#include <cstdio>

#include "core/profiler.h"
#include "distributed/backends/process_group_debug.h"
#include "distributed/ddp/reducer.h"

namespace gr::distributed {

namespace {

double ms_between(int64_t from_ns, int64_t to_ns) { return (to_ns - from_ns) * 1e-6; }

}  // namespace

bool ddp_info_logging() { return debug_level() != DebugLevel::Off; }

void Reducer::record_iteration(int64_t wait_start_ns, int64_t wait_end_ns) {
  IterationStats st;
  st.iteration = iteration_;
  st.forward_ms = forward_ms_;
  st.backward_ms = first_ready_ns_ ? ms_between(first_ready_ns_, last_ready_ns_) : 0;
  st.wait_ms = ms_between(wait_start_ns, wait_end_ns);
  for (size_t k = 0; k < buckets_.size(); ++k) {
    const Timeline& t = buckets_[k].timeline;
    const int64_t done = t.done_ns && *t.done_ns ? *t.done_ns : wait_end_ns;
    st.communication_ms += ms_between(t.launch_ns, done);
    if (profiler::enabled()) {
      if (t.first_ready_ns)
        profiler::record("bucket " + std::to_string(k) + " gradients", "ddp", t.first_ready_ns, t.ready_ns, "buckets");
      const char* op = options_.shard_gradients ? "reduce_scatter bucket " : "allreduce bucket ";
      profiler::record(op + std::to_string(k), "comm", t.launch_ns, done, "comm");
      const Bucket& b = buckets_[k];
      if (b.stepped)
        profiler::record((options_.shard_gradients ? "shard step bucket " : "step bucket ") + std::to_string(k), "ddp",
                         b.step_start_ns, b.step_end_ns, "steps");
    }
  }
  last_stats_ = st;
  if (ddp_info_logging()) log_iteration();
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
