// Reducer: DDP's gradient machinery. Parameters are grouped into buckets (flat gradient
// buffers); a hook after each parameter's gradient is accumulated copies it into its bucket
// slice, scaled by 1 / world size; full buckets are all-reduced asynchronously, strictly in
// bucket order, while backward goes on; at the end of backward the averaged gradients are
// written back. One file per job: reducer.cpp (arming, the hook and launch path),
// reducer_buckets.cpp (layout and rebuild), reducer_finalize.cpp (wait and write-back),
// reducer_join.cpp (join's shadow iterations), reducer_stats.cpp (statistics, trace, logs).
// See Note [DDP buckets], Note [Reducer phases] and docs/ddp-internals.md.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "distributed/backends/process_group.h"
#include "distributed/ddp/comm_hooks.h"
#include "distributed/ddp/optimizer_class.h"

namespace gr::distributed {

// Note [DDP buckets]
// Initial layout (torch's): the parameters that require grad, in registration order, split
// by dtype, each group cut into buckets that close once they reach the limit (the first
// bucket `first_bucket_bytes`, later ones `bucket_bytes`; a bucket may overshoot by one
// tensor); then the bucket list is reversed, so bucket 0 holds the last layers, whose
// gradients come first in backward. After the first iteration the buckets are rebuilt once
// from the order gradients actually arrived on rank 0 (broadcast, so every rank agrees),
// unless find_unused_parameters is set without static_graph.

// GRADRING_DISTRIBUTED_DEBUG=INFO (or DETAIL): DDP logs its bucket layout and timings.
bool ddp_info_logging();

struct ReducerOptions {
  int64_t bucket_bytes = 25 << 20;
  int64_t first_bucket_bytes = 1 << 20;
  bool find_unused_parameters = false;
  bool gradient_as_bucket_view = false;
  bool static_graph = false;
  bool shard_gradients = false;  // ZeRO-2: Note [Gradient sharding]
  bool gather_in_forward = false;  // with shard_gradients: Note [Gathers in forward] (ddp_gather.cpp)
};

// Timings of one iteration (milliseconds), for GRADRING_DISTRIBUTED_DEBUG=INFO and benchmarks.
struct IterationStats {
  int64_t iteration = -1;
  double forward_ms = 0;        // DDP's forward (broadcasts included)
  double backward_ms = 0;       // first gradient ready .. last gradient ready
  double communication_ms = 0;  // sum over buckets of launch .. reduced
  double wait_ms = 0;           // end of backward blocked on the last all-reduces
};

class Reducer {
 public:
  // `params`: the model's parameters that require grad, in registration order (each once),
  // `names` their dotted names (for errors and logs).
  Reducer(TensorList params, std::vector<std::string> names, ProcessGroupPtr group, const ReducerOptions& options);
  ~Reducer();
  Reducer(const Reducer&) = delete;
  Reducer& operator=(const Reducer&) = delete;

  // Called by DDP's forward. prepare_for_forward checks the previous iteration finished its
  // reduction (the unused-parameter error) and rebuilds the buckets when due;
  // prepare_for_backward arms the hooks for the coming backward (and, with
  // find_unused_parameters, marks parameters that `outputs` do not depend on as ready).
  void prepare_for_forward();
  void prepare_for_backward(const TensorList& outputs);
  // Hooks do nothing until the next prepare_for_backward (no_sync, or eval-mode forwards).
  void disarm();

  // join(): one iteration of a rank that has run out of data, mirroring the collectives of
  // an active iteration with zero gradients.
  void shadow_iteration();

  void set_comm_hook(CommHook hook);
  // Steps each bucket's parameters as soon as its reduction completes (Note [Optimizer in
  // backward]); with shard_gradients, this rank's shard of each bucket (Note [Gradient
  // sharding]). Before the first forward.
  void set_optimizer_in_backward(OptimizerFactory optimizer_class);
  bool optimizer_in_backward() const { return step_factory_ != nullptr; }
  // The optimizers stepped in backward: one per parameter, or with shard_gradients one per
  // bucket over this rank's shard.
  std::vector<optim::Optimizer*> in_backward_optimizers() const;
  // Their state, for snapshots: "param.<i>.<key>" per parameter, or with shard_gradients
  // "bucket.<k>.<key>" per bucket plus "zero.world_size" / "zero.rank" (a shard resumes only
  // on the same rank of the same world size: the load says so otherwise).
  OrderedDict<Tensor> optimizer_state_dict() const;
  void load_optimizer_state_dict(const OrderedDict<Tensor>& state);
  // Bytes of gradients this rank holds now: the parameters' .grad, the bucket buffers and,
  // with shard_gradients, the reduced shards.
  int64_t gradient_bytes() const;

  // gather_in_forward (Note [Gathers in forward]): backward ends with the parameters'
  // all-gathers launched, not waited. wait_gathers waits for those of `buckets` still in
  // flight (in launch order) and copies them into the parameters, freeing each bucket
  // buffer; wait_all_gathers does it for every bucket. No-ops when nothing is in flight.
  bool gathers_pending() const { return pending_gathers_ > 0; }
  void wait_gathers(const std::vector<size_t>& buckets);
  void wait_all_gathers();

  // Layout: per bucket, the parameter indices (into the constructor's list) and bytes.
  std::vector<std::vector<size_t>> bucket_indices() const;
  std::vector<int64_t> bucket_bytes() const;
  std::string layout_string() const;
  const std::vector<std::string>& parameter_names() const { return names_; }
  bool buckets_rebuilt() const { return rebuilt_; }
  // Iterations whose reduction has finished (shadow iterations included).
  int64_t iteration() const { return iteration_; }
  const IterationStats& last_stats() const { return last_stats_; }
  void set_forward_ms(double ms) { forward_ms_ = ms; }

 private:
  // Note [Reducer phases]
  // One iteration of the reduction: Idle (nothing armed) -> prepare_for_backward -> Armed ->
  // the first gradient -> Reducing -> the last bucket launched -> Launched -> finalize ->
  // Idle (the iteration counts). With find_unused_parameters a forward whose outputs reach no
  // parameter goes from Armed to Launched at once, and the next forward finalizes it. A
  // forward that finds the previous iteration Reducing (a backward that left parameters
  // without gradients) fails on every rank rather than mixing up later collectives.
  enum class Phase { Idle, Armed, Reducing, Launched };

  struct Timeline {  // of one bucket in one iteration (profiler::now_ns), for stats and traces
    int64_t first_ready_ns = 0, ready_ns = 0, launch_ns = 0;
    std::shared_ptr<int64_t> done_ns;  // set by the work's completion callback
  };
  // With shard_gradients: this rank's slice [rank * elems, (rank + 1) * elems) of the bucket
  // (the bucket padded to world size * elems), its parameters' values, and their gradient.
  struct Shard {
    int64_t elems = 0;
    Tensor param;  // a leaf the shard's optimizer steps
    Tensor grad;   // the reduce-scatter's output
    std::unique_ptr<optim::Optimizer> optimizer;
    WorkPtr gather;
    int64_t gather_launch_ns = 0;
    std::shared_ptr<int64_t> gather_done_ns;  // set by the gather's completion callback
  };
  struct Bucket {
    std::vector<size_t> params;  // indices into params_
    std::vector<int64_t> offsets;  // per parameter: elements into buffer
    Tensor buffer;               // flat, params' dtype and device (a FlatBuffer)
    std::vector<Tensor> views;   // per parameter: buffer slice shaped like the parameter
    size_t pending = 0;          // gradients not yet ready in this iteration
    WorkPtr work;
    Timeline timeline;
    bool stepped = false;                 // optimizer in backward: done this iteration
    int64_t step_start_ns = 0, step_end_ns = 0;
    Shard shard;
  };

  // reducer.cpp: arming and the hook and launch path.
  void reset_iteration_state();
  void on_gradient_ready(size_t index);
  void mark_ready(size_t index, bool from_hook);
  void launch(size_t bucket);
  void launch_hook(size_t bucket);  // the communication hook's reduction of a whole bucket
  [[noreturn]] void fail_unfinished_reduction();
  std::vector<size_t> unreached_parameters(const TensorList& outputs) const;
  // reducer_buckets.cpp: layout and rebuild.
  void build_buckets(const std::vector<size_t>& order, bool reverse);
  void rebuild_buckets();
  std::string names_of(const std::vector<size_t>& indices) const;
  // reducer_step.cpp: the optimizer in backward and gradient sharding.
  void allocate_buffer(Bucket& b);
  int64_t bytes_of(const Bucket& b) const;
  void step_completed_buckets();
  void step_bucket(size_t k);
  void launch_gathers();
  void gather_parameters();
  // reducer_gather.cpp: one bucket's all-gather, launched and waited.
  void launch_gather(size_t k);
  void wait_gather(size_t k);
  // reducer_finalize.cpp: the end of an iteration (reducer_join.cpp: shadow_iteration).
  void finalize_backward();
  void write_back_gradients();
  void wait_launched_quietly();
  void end_iteration();
  // reducer_stats.cpp: statistics, trace spans, logs.
  void record_iteration(int64_t wait_start_ns, int64_t wait_end_ns);
  void log_iteration() const;

  TensorList params_;
  std::vector<std::string> names_;
  ProcessGroupPtr group_;
  ReducerOptions options_;
  CommHook hook_;
  std::vector<size_t> hook_handles_;
  OptimizerFactory step_factory_;
  std::vector<std::unique_ptr<optim::Optimizer>> param_optimizers_;  // optimizer in backward, per parameter
  size_t next_step_ = 0;                                             // the next bucket to step
  size_t next_gather_ = 0;  // shard_gradients: how many buckets' all-gathers were launched
  size_t pending_gathers_ = 0;  // launched and not yet copied into the parameters

  std::vector<Bucket> buckets_;
  std::vector<size_t> bucket_of_;  // parameter -> bucket
  std::vector<size_t> slot_of_;    // parameter -> position in its bucket

  // Per-iteration state.
  Phase phase_ = Phase::Idle;
  int64_t iteration_ = 0;
  std::vector<char> ready_;
  std::vector<char> used_;        // got a gradient locally this iteration
  Tensor used_global_;            // all-reduced used_ (find_unused_parameters)
  WorkPtr used_work_;
  size_t next_bucket_ = 0;
  int64_t first_ready_ns_ = 0, last_ready_ns_ = 0;
  double forward_ms_ = 0;
  IterationStats last_stats_;

  // Bucket rebuild from the observed order, and static_graph's unused set (found once).
  std::vector<size_t> ready_order_;
  bool rebuilt_ = false;
  std::optional<std::vector<size_t>> static_unused_;
};

}  // namespace gr::distributed
