// FSDPUnit: the state of one fully_shard unit: its sharded layout, this rank's flat shard,
// the unsharded storage its module's parameters live in, and the hooks that gather, free and
// reduce. fsdp_unit.cpp: layout and sharding; fsdp_gather.cpp: gathers, prefetch and the
// DETAIL order check; fsdp_backward.cpp: gradients; fsdp_root.cpp: the root's lazy init,
// learned orders and end of backward.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "distributed/fsdp/fully_shard.h"

namespace gr::distributed::fsdp {

// Note [FSDP units]
// fully_shard(module) makes `module` a unit over the parameters it owns that no unit below it
// owns. Every parameter is sharded on dim 0 as torch.chunk does (FSDP2's placement): with
// d0 rows and N ranks, rank r holds rows [r * c, (r + 1) * c), c = ceil(d0 / N), padded with
// zero rows to c where the parameter ends earlier (uneven sizes; a rank may hold only
// padding). A unit's shards lie back to back in one flat tensor per rank (`shard_`, S
// elements), so one all-gather of S elements per rank gathers the whole unit into a rank-major
// [N, S] buffer, and each parameter is copied out of it into its place (a strided copy per
// parameter, as FSDP2's copy-out). The optimizer's parameters are the per-parameter views
// `local` of the flat shard ([c, rest...]: torch's per-parameter sharded DTensors, so param
// groups by name or shape still work); gradients are reduce-scattered from a [N, S] buffer
// laid out the same way into one S-element tensor whose slices become the locals' .grad.
//
// The module's parameters keep their TensorImpls (the module's code reads its members), but
// their storage is the unit's one `unsharded_` Storage, released (Note [Released storage] in
// core/storage.h) whenever the unit is sharded and reallocated by each gather. Views and
// tensors autograd saved in forward share that StorageImpl, so the gather before backward
// refills what they read; the gather keeps the storage's version (as torch's
// _unsafe_preserve_version_counter), so autograd does not take it for an in-place change.
//
// One iteration (Note [FSDP iteration] in fsdp_root.cpp for the root's part):
//  - pre-forward (the module's forward pre-hook): unshard (gather, wait, copy out), then
//    issue the next unit's gather (Note [FSDP prefetch] in fsdp_gather.cpp);
//  - post-forward (its forward hook): reshard unless reshard_after_forward is off, or this is
//    the root with a backward to come; a hook on each output's gradient is registered
//    (grad_fn pre-hooks) for the pre-backward;
//  - pre-backward (the first of those hooks to fire in a backward): finish the reduce-scatter
//    in flight, unshard again, and prefetch the unit that comes next in backward (Note [FSDP
//    memory bound] in fsdp_backward.cpp);
//  - post-backward (the post-accumulate-grad hook of the unit's last parameter to get its
//    gradient): reshard, copy the gradients into the [N, S] buffer (scaled by 1/N, as DDP
//    does), dropping each full gradient, launch the reduce-scatter. With
//    set_requires_gradient_sync(false) the gradients stay in .grad and nothing is reduced.
//    At most one reduce-scatter is in flight: the next unit's pre-backward (or post-backward)
//    finishes it (adds it into the locals' .grad, frees its buffers). With
//    reduce_scatter_bucket_cap_mb the gradients go in pieces, each as soon as it is ready
//    (Note [FSDP reduce-scatter buckets] in fsdp_backward.cpp); post-backward launches the rest.
//  - end of backward (the root's queued callback): units whose post-backward did not run
//    (parameters without gradients) run it now, in unit order; every reduce-scatter still in
//    flight is waited for and added into the locals' .grad; every unit is resharded.
// A forward that runs inside a backward (activation checkpointing recomputing a unit in its
// backward, after its pre-backward gathered it) only gathers: no prefetch, no order learned,
// no reshard and no new hooks; the unit's post-backward frees it as usual.
// Every rank must issue the same gathers and reduce-scatters in the same order: units run
// in the same order everywhere when the program is the same (a mismatch is reported by
// GRADRING_DISTRIBUTED_DEBUG=DETAIL).
//
// Ownership (no reference cycles): the module's forward hooks own the unit (so it lives as
// long as the module); the unit holds the module by raw pointer, and the parameter and
// gradient hooks it registers hold it weakly or by a raw pointer removed in its destructor.

class FSDPUnit : public std::enable_shared_from_this<FSDPUnit> {
 public:
  struct Param {
    std::string local_name;       // relative to the unit's module
    std::string name;             // qualified from the root once the root is known
    Tensor param;                 // the module's tensor, a view of unsharded_
    std::vector<int64_t> shape;   // the parameter's shape
    int64_t rows = 1;             // dim 0 (1 for a 0-dim parameter)
    int64_t row_elems = 1;        // elements per row
    int64_t shard_rows = 0;       // c = ceil(rows / N)
    int64_t shard_offset = 0;     // elements into the flat shard
    int64_t unsharded_offset = 0; // elements into the unsharded storage
    Tensor local;                 // this rank's shard: [c, rest...], a leaf viewing shard_
    size_t hook = 0;              // its post-accumulate-grad hook (requires_grad parameters)
    bool ready = false;           // its gradient arrived in this backward
    int64_t grad_bytes = 0;       // its full .grad as counted by account_bytes (until reduced)
    int64_t shard_numel() const { return shard_rows * row_elems; }
    int64_t numel() const { return rows * row_elems; }
  };

  // `params`: (name relative to module, the module's tensor) of the parameters this unit owns.
  FSDPUnit(nn::Module& module, std::vector<std::pair<std::string, Tensor>> params, const FullyShardOptions& options);
  ~FSDPUnit();
  FSDPUnit(const FSDPUnit&) = delete;
  FSDPUnit& operator=(const FSDPUnit&) = delete;

  // fsdp_unit.cpp: hooks (after construction: they need shared_from_this).
  void install_hooks();

  nn::Module& module() const { return *module_; }
  const ProcessGroupPtr& group() const { return group_; }
  const std::vector<Param>& params() const { return params_; }
  const std::string& name() const { return name_; }  // "" for the root, else its qualified module name
  FSDPUnit* parent() const { return parent_; }
  // Claimed by the unit above (fully_shard of an ancestor): the tree is re-initialised.
  void set_parent(FSDPUnit* parent) {
    parent_ = parent;
    root_ = nullptr;
    units_.clear();
  }
  // The root of this unit's tree (after lazy init), and its units in pre-order (root only).
  FSDPUnit* root() const { return root_; }
  const std::vector<FSDPUnit*>& units() const { return units_; }

  bool requires_gradient_sync() const { return sync_; }
  void set_requires_gradient_sync(bool on) { sync_ = on; }
  void set_reshard_after_forward(bool on) { reshard_after_forward_ = on; }
  // FSDPModule::set_modules_to_forward_prefetch / _backward_prefetch and set_prefetch_enabled
  // (Note [FSDP prefetch]): nullopt, the learned one ahead; else exactly these (none: no prefetch).
  void set_prefetch(bool forward, std::optional<std::vector<std::weak_ptr<FSDPUnit>>> units) {
    (forward ? forward_prefetch_ : backward_prefetch_) = std::move(units);
  }
  bool is_unsharded() const { return gather_ == Gather::Done; }
  ScalarType master_dtype() const { return master_dtype_; }  // the shards' dtype (the parameters' own)
  ScalarType compute_dtype() const { return compute_dtype_; }
  ScalarType reduce_dtype() const { return reduce_dtype_; }
  int64_t shard_elems() const { return shard_elems_; }
  const Tensor& flat_shard() const { return shard_; }

  // fsdp_gather.cpp. issue_gather launches the all-gather (a no-op unless sharded);
  // wait_gather waits for it and copies the parameters out; unshard does both; reshard
  // releases the parameters (waiting first for a gather in flight).
  void issue_gather();
  void issue_piece(size_t k);  // the all-gather of gather_pieces_[k]
  void wait_gather();
  void unshard();
  void reshard();
  // Writes this rank's profiler events as `<dir>/rank<r>.json` (FSDPModule::write_chrome_trace).
  std::string write_chrome_trace(const std::string& dir) const;

  // fsdp_root.cpp: finds the root above this unit and initialises its tree once.
  void lazy_init();
  // Names the units of the tree below this one (this one "") and their parameters by their
  // qualified module names; returns them in pre-order.
  std::vector<FSDPUnit*> name_tree();

 private:
  // fsdp_unit.cpp
  void shard_parameters();  // builds shard_ from the module's values (rank 0's, broadcast)
  void check_same_units_everywhere() const;
  std::string released_reason() const;
  // Hooks.
  void pre_forward();
  void post_forward(const TensorList& outputs);
  // fsdp_gather.cpp: GRADRING_DISTRIBUTED_DEBUG=DETAIL's check that every rank is about to
  // run the same collective of the same unit (`what`: "gathers", "reduce-scatters").
  void check_same_unit_everywhere(const char* what) const;
  std::string label() const { return name_.empty() ? "root" : name_; }
  // Issues the gathers of `explicit_units` when set, else of `learned` (Note [FSDP prefetch]).
  void prefetch(const std::optional<std::vector<std::weak_ptr<FSDPUnit>>>& explicit_units, FSDPUnit* learned);
  // fsdp_backward.cpp
  void pre_backward();
  void on_gradient_ready(size_t index);
  void post_backward();
  // Note [FSDP reduce-scatter buckets]: the flat shard's elements [lo, hi), whole rows of the
  // parameters [begin, end), in pieces of at most cap_mb MiB of [N, S_b] elements of elem_size
  // bytes (a row over the cap alone); one piece of everything when cap_mb is 0.
  struct Bucket {
    size_t begin = 0, end = 0;
    int64_t lo = 0, hi = 0;
    // The rows [r0, r1) of parameter p's shard that this piece holds (r0 == r1: none).
    std::pair<int64_t, int64_t> rows_of(const Param& p) const {
      const int64_t end_col = p.shard_offset + p.shard_numel();
      if (p.shard_numel() == 0 || hi <= p.shard_offset || lo >= end_col) return {0, 0};
      return {(std::max(lo, p.shard_offset) - p.shard_offset) / p.row_elems,
              (std::min(hi, end_col) - p.shard_offset) / p.row_elems};
    }
  };
  std::vector<Bucket> make_buckets(double cap_mb, size_t elem_size, const char* option) const;
  bool bucket_ready(size_t b) const;
  void launch_reduce(size_t b);  // the reduce-scatter of bucket b (at most one in flight)
  void finish_reduce();  // waits for the reduce-scatter, adds into the locals' .grad
  // Root: waits for and finishes every reduce-scatter in flight (at most one: Note [FSDP
  // memory bound] in fsdp_backward.cpp).
  void finish_reduces();
  // Root: finishes the reduce-scatters that have completed (freeing their buffers at once
  // instead of at the end of backward); polls, never blocks.
  void finish_completed_reduces();
  // fsdp_root.cpp
  void become_root();
  void learn_forward_order();   // root: Note [FSDP prefetch]
  void learn_backward_order();
  void queue_end_of_backward();
  void end_of_backward();
  void reset_backward_state();

  nn::Module* module_;
  ProcessGroupPtr group_;
  std::vector<Param> params_;
  std::vector<nn::RemovableHandle> module_hooks_;
  bool reshard_after_forward_ = true;
  bool sync_ = true;
  ScalarType master_dtype_ = kFloat32, compute_dtype_ = kFloat32, reduce_dtype_ = kFloat32;
  Device device_;
  int64_t shard_elems_ = 0;      // S
  int64_t unsharded_elems_ = 0;  // sum of the parameters' sizes
  Tensor shard_;                 // [S], master_dtype_: this rank's shards back to back
  Storage unsharded_;            // the module's parameters' storage (released while sharded)
  enum class Gather { None, Issued, Done } gather_ = Gather::Done;  // None: sharded
  WorkPtr gather_work_;
  Tensor gather_source_, gather_buffer_;  // alive while the all-gather runs
  int64_t gather_bytes_ = 0;              // gather_source_'s, as counted by account_bytes
  int64_t gather_issue_ns_ = 0;
  std::shared_ptr<int64_t> gather_done_ns_;
  std::string name_;
  FSDPUnit* parent_ = nullptr;
  FSDPUnit* root_ = nullptr;
  std::vector<FSDPUnit*> units_;  // root only: the tree's units in pre-order, itself first
  size_t index_ = 0;              // this unit's place in its root's units_
  bool detail_ = false;           // GRADRING_DISTRIBUTED_DEBUG=DETAIL (read at the root's init)
  // Note [FSDP prefetch]: the unit whose gather this one's pre-forward / pre-backward issues.
  FSDPUnit* next_forward_ = nullptr;
  FSDPUnit* next_backward_ = nullptr;
  // set_modules_to_forward_prefetch / _backward_prefetch: when set, in place of those.
  std::optional<std::vector<std::weak_ptr<FSDPUnit>>> forward_prefetch_, backward_prefetch_;
  // Note [FSDP reduce-scatter buckets]: parameters [begin, end) (consecutive, so their shards
  // are the flat shard's elements [lo, hi)), in launch order (reverse registration order); one
  // bucket of every parameter unless reduce_scatter_bucket_cap_mb (all_gather_bucket_cap_mb) is set.
  std::vector<Bucket> buckets_, gather_pieces_;
  // Root only: the orders of the first forward and backward, until learned.
  std::vector<FSDPUnit*> forward_order_, backward_order_;
  bool forward_learned_ = false, backward_learned_ = false;
  std::vector<FSDPUnit*> reducing_;  // root only: units whose reduce-scatter is in flight

  // Per-backward state.
  bool in_graph_ = false;          // a forward with grad ran since the last backward ended
  bool backward_started_ = false;  // pre_backward ran in this backward
  bool reduced_ = false;           // post_backward ran in this backward
  size_t pending_grads_ = 0;       // requires_grad parameters without a gradient yet
  size_t grad_params_ = 0;         // how many parameters require grad
  bool end_queued_ = false;        // root: the end-of-backward callback is queued
  size_t next_bucket_ = 0;         // the first bucket not launched in this backward
  size_t reduce_bucket_ = 0;       // the bucket whose reduce-scatter is in flight
  WorkPtr reduce_work_;
  Tensor reduce_input_, reduce_output_;
  int64_t reduce_bytes_ = 0;  // theirs, as counted by account_bytes
  // Trace spans (profiler::now_ns).
  int64_t forward_start_ns_ = 0, backward_start_ns_ = 0, reduce_launch_ns_ = 0;
  std::shared_ptr<int64_t> reduce_done_ns_;
};

// Between a parameter's values (`flat`, [numel], its rows in order) and a piece's rank-major
// [N, S_b] buffer `rank_major` (Note [FSDP units]): the rows [r0, r1) of every rank's chunk of
// p (those the parameter has: the last chunks may be short or empty), at column `col` of the
// buffer (rank r's rows at rank_major[r * S_b + col ...]). `to_rank_major`: gradients into a
// reduce-scatter's input; else a gather's output into the parameter. Strided copies, one for the
// ranks holding full chunks and one for the rank holding the short one.
void copy_rows(const Tensor& rank_major, int64_t S_b, int64_t col, const Tensor& flat, const FSDPUnit::Param& p,
               int64_t r0, int64_t r1, bool to_rank_major);

// Counts bytes fully_shard allocates (> 0) or frees (< 0) besides the shards (memory_stats).
void account_bytes(int64_t delta);

// The unit fully_shard made of `module`, or null (fully_shard.cpp keeps the registry).
std::shared_ptr<FSDPUnit> find_unit(const nn::Module* module);

}  // namespace gr::distributed::fsdp
