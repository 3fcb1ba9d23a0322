// A unit's backward: the pre-backward gather (a hook on its outputs' gradients), the
// post-accumulate-grad hooks counting its parameters' gradients, and the reduce-scatters
// into this rank's shard gradients (the whole unit at its post-backward, or in pieces as the
// gradients come). See Note [FSDP units].
#include <algorithm>

#include "autograd/engine.h"
#include "autograd/grad_mode.h"
#include "core/factory.h"
#include "core/native/copy/copy.h"
#include "core/native/elementwise/elementwise.h"
#include "core/profiler.h"
#include "distributed/fsdp/fsdp_unit.h"

namespace gr::distributed::fsdp {

// Note [FSDP memory bound]
// Beside the shards, their gradients and the optimizer state (the ZeRO paper's (4 + 4 + K)/N
// bytes per parameter), a step holds a few units' worth of full-size tensors. Left alone they
// pile up: a unit's reduce-scatter overlapping the next unit's whole backward keeps its [N, S]
// input alive beside that unit's parameters, its growing gradients and the prefetched gather
// of the unit after it (GPT small peaked at 11.02 bytes per parameter on 2 ranks for the 8 of
// its shards; a chain of small units on gloo at 6-7.5 units). So what is in flight is bounded,
// deterministically:
//  - at most one reduce-scatter at a time (FSDP2's rule): a unit's post-backward finishes the
//    previous one (waits, adds it into the shards' .grad, frees its buffers) before
//    allocating its own buffer;
//  - more strictly, the next unit's pre-backward finishes it before copying its own
//    parameters out, issuing the prefetch and computing its gradients. The reduce-scatter
//    then overlaps only what autograd runs between the two hooks (the unit's backward after
//    its last parameter's gradient); its time (one reduce of a unit's bytes, short against a
//    unit's backward) is what the bound costs;
//  - a unit's own gather is waited for (copied out, its buffer freed) before the next unit's
//    is issued: one all-gather buffer at a time (Note [FSDP prefetch]);
//  - the unit's parameters are freed before its reduce-scatter buffer is allocated, and each
//    full gradient is dropped as soon as it is copied into that buffer.
// With u the bytes of one (the largest) unit gathered: in forward the unit computing and the
// next one's gather, 2u; in backward the unit's parameters, its gradients and the next unit's
// gather, at most 3u, as in its post-backward (that gather, the gradients not yet copied, the
// buffer); the reduce-scatter's output (u/N) comes after the gradients are gone. 3u is the
// floor of prefetching one unit ahead in backward. A unit whose backward spans others' (a
// parent with parameters used before and after its children, as GPT's embeddings around the
// blocks) adds its own parameters and gradients. bench_ddp --modes fsdp measures it
// (fsdp::memory_stats: 10.04 bytes per parameter on GPT small, 2 ranks); test_fsdp.cpp
// asserts the 3u.
// Below 3u, toward the ZeRO goal's one unit, is a choice of memory over overlap, per unit:
//  - no prefetch (FSDPModule::set_prefetch_enabled(false)):
//    the next unit's gather is issued by its own hook, after this unit is freed; 2u (the
//    parameters and their gradients; a gather's buffer beside the parameters in its copy-out).
//    Cost: every all-gather is waited for in full, overlapping no compute;
//  - pieces (reduce_scatter_bucket_cap_mb, all_gather_bucket_cap_mb; Note [FSDP reduce-scatter
//    buckets]): the gradients leave in pieces as they come and a gather arrives in pieces, so
//    beside the unit's parameters wait its largest parameter's full gradient (autograd hands it
//    over whole) and a few pieces' buffers. Cost: more, smaller collectives; each reduce-scatter
//    overlaps only the compute until the next piece is launched, each piece's gather only the
//    previous piece's copy-out. With prefetch on, only the first piece is prefetched.
// Both: u + the largest parameter + ~2.5 pieces (test_fsdp.cpp: 1.44u for 12 units of four
// Linear in half-Linear pieces, 3u by default); on GPT small (bench_ddp --modes fsdp-lean,
// 1 MiB pieces) see docs/benchmarks.md.

// Note [FSDP reduce-scatter buckets]
// With reduce_scatter_bucket_cap_mb a unit's gradients are reduce-scattered in pieces instead of
// at once when its backward ends. The pieces are fixed at fully_shard: the parameters in reverse
// registration order (their gradients come roughly in that order in backward, as DDP's buckets
// assume), a piece closed before the parameter that would take its [N, S_b] input over the cap;
// a parameter over the cap is split by rows of its shard into pieces of its own (a piece ending
// inside a parameter would keep its whole gradient waiting for the next parameter's). A piece
// is whole rows of consecutive parameters, so its shards are the elements [lo, hi) of the flat
// shard and its input is the same rank-major layout as the whole unit's (Note [FSDP units])
// over those columns only (copy_rows in fsdp_gather.cpp): the reduce-scatter of every piece
// adds exactly the numbers the one of the whole unit adds, in the same per-element order (equal
// bitwise where that is DDP's order). Pieces are launched strictly in order, each once every
// parameter of it has its gradient (the post-accumulate-grad hook), so every rank issues the
// same reduce-scatters in the same order whatever order its gradients came in; each launch
// first finishes the reduce-scatter in flight (one at a time, Note [FSDP memory bound]) and
// drops the full gradients whose last rows it copies in; the rows' sums are added into the
// shards' .grad (zeros first when unset). The unit's post-backward launches what is left (its
// last piece; at the end of backward, pieces with gradients missing, as zeros). Saved: the
// unit's full gradients no longer pile up to a whole unit beside its gathered parameters; at
// most one piece's worth waits. Cost: more, smaller collectives, each overlapping only the
// compute up to the next piece's launch.

std::vector<FSDPUnit::Bucket> FSDPUnit::make_buckets(double cap_mb, size_t elem_size, const char* option) const {
  GR_CHECK(cap_mb >= 0, "fully_shard: ", option, " must be >= 0 (0: the whole unit at once), got ", cap_mb);
  std::vector<Bucket> out;
  const double cap = cap_mb * 1024.0 * 1024.0;
  double bytes = 0;  // the open piece's
  auto open = [&](size_t i, int64_t col) {
    out.push_back({i, i + 1, col, col});
    bytes = 0;
  };
  // From the last parameter's last row down: each piece takes whole rows while they fit.
  for (size_t i = params_.size(); i-- > 0;) {
    const Param& p = params_[i];
    if (out.empty()) open(i, p.shard_offset + p.shard_numel());
    if (cap == 0 || p.shard_numel() == 0) {  // all in one piece; an empty parameter joins the open one
      out.back().begin = i;
      out.back().lo = p.shard_offset;
      continue;
    }
    const double row_bytes = static_cast<double>(group_->size() * p.row_elems) * static_cast<double>(elem_size);
    // A parameter that does not fit in the open piece starts one: a piece ending inside a
    // parameter would keep its full gradient alive until the next parameter's arrive.
    const double p_bytes = row_bytes * static_cast<double>(p.shard_rows);
    if (bytes > 0 && bytes + p_bytes > cap) open(i, p.shard_offset + p.shard_numel());
    for (int64_t top = p.shard_rows; top > 0;) {  // rows [0, top) of p not placed yet
      const int64_t fit = static_cast<int64_t>((cap - bytes) / row_bytes);
      if (fit <= 0 && bytes > 0) {
        open(i, p.shard_offset + top * p.row_elems);
        continue;
      }
      const int64_t take = std::min(std::max<int64_t>(fit, 1), top);
      top -= take;
      bytes += static_cast<double>(take) * row_bytes;
      out.back().begin = i;
      out.back().lo = p.shard_offset + top * p.row_elems;
    }
    if (p_bytes > cap) bytes = cap;  // split over pieces: its last piece holds nothing else either
  }
  return out;
}

bool FSDPUnit::bucket_ready(size_t b) const {
  for (size_t i = buckets_[b].begin; i < buckets_[b].end; ++i)
    if (params_[i].param.requires_grad() && !params_[i].ready) return false;
  return true;
}

void FSDPUnit::pre_backward() {
  if (backward_started_) return;  // one hook per output; the first one gathers
  backward_started_ = true;
  if (root_) {
    root_->queue_end_of_backward();
    if (!root_->backward_learned_) root_->backward_order_.push_back(this);
  }
  // The previous unit's reduce-scatter is finished (its buffers freed) before this unit's
  // parameters are copied out, the next unit's gather is issued and this unit's gradients
  // appear (Note [FSDP memory bound]); then own gather, waited for, then the next unit's in
  // backward order (Note [FSDP prefetch]).
  if (root_) root_->finish_reduces();
  unshard();
  prefetch(backward_prefetch_, next_backward_);
  backward_start_ns_ = profiler::now_ns();
}

void FSDPUnit::on_gradient_ready(size_t index) {
  if (!in_graph_ || reduced_) return;  // a backward through no forward of this unit's, or after its reduction
  Param& p = params_[index];
  if (p.ready) return;
  p.ready = true;
  if (!p.grad_bytes && p.param.grad().defined()) {  // counted once until its reduce-scatter drops it
    p.grad_bytes = static_cast<int64_t>(p.param.grad().nbytes());
    account_bytes(p.grad_bytes);
  }
  if (root_) root_->queue_end_of_backward();
  if (--pending_grads_ == 0) return post_backward();
  // Note [FSDP reduce-scatter buckets]: the pieces whose gradients are all here, in order.
  if (sync_ && buckets_.size() > 1)
    while (next_bucket_ < buckets_.size() && bucket_ready(next_bucket_)) launch_reduce(next_bucket_++);
}

void FSDPUnit::post_backward() {
  reduced_ = true;
  if (profiler::enabled() && backward_start_ns_)
    profiler::record("backward " + label(), "fsdp", backward_start_ns_, profiler::now_ns(), "fsdp units");
  backward_start_ns_ = 0;
  // Every use of the parameters in this backward is done (their gradients are final): free them
  // before the reduce-scatter's buffer is allocated.
  reshard();
  if (sync_)
    while (next_bucket_ < buckets_.size()) launch_reduce(next_bucket_++);
  if (root_) root_->finish_completed_reduces();
}

void FSDPUnit::launch_reduce(size_t b) {
  // At most one reduce-scatter in flight (FSDP2's rule): the previous one's buffers go first.
  if (root_) root_->finish_reduces();
  NoGradGuard no_grad;
  const Bucket& bk = buckets_[b];
  const int64_t n = group_->size(), S = bk.hi - bk.lo;
  Tensor buffer = zeros({n * S}, TensorOptions(reduce_dtype_).device(device_));
  reduce_bytes_ = static_cast<int64_t>(buffer.nbytes());  // counted before the full gradients go
  account_bytes(reduce_bytes_);
  for (size_t i = bk.begin; i < bk.end; ++i) {
    Param& p = params_[i];
    Tensor& grad = p.param.mutable_grad();
    if (!grad.defined()) continue;  // no gradient on this rank: zeros
    const auto [r0, r1] = bk.rows_of(p);
    copy_rows(buffer, S, p.shard_offset + r0 * p.row_elems - bk.lo, native::contiguous(grad).view({p.numel()}), p, r0,
              r1, /*to_rank_major=*/true);
    if (r0 > 0) continue;  // the pieces after this one hold its lower rows
    grad = Tensor();  // this rank keeps only its shard of the gradient
    account_bytes(-p.grad_bytes);
    p.grad_bytes = 0;
  }
  reduce_bucket_ = b;
  // Divide before summing, as DDP does (keeps float16 sums in range; the same rounding).
  if (n > 1) native::mul_(buffer, native::wrapped_scalar(buffer, 1.0 / static_cast<double>(n)));
  if (n == 1) {
    reduce_output_ = buffer;
    return finish_reduce();  // one rank: nothing to wait for
  }
  check_same_unit_everywhere("reduce-scatters");
  reduce_output_ = empty({S}, TensorOptions(reduce_dtype_).device(device_));
  reduce_bytes_ += static_cast<int64_t>(reduce_output_.nbytes());
  account_bytes(static_cast<int64_t>(reduce_output_.nbytes()));
  std::vector<Tensor> inputs;
  for (int64_t r = 0; r < n; ++r) inputs.push_back(buffer.narrow(0, r * S, S));
  reduce_launch_ns_ = profiler::now_ns();
  reduce_work_ = group_->reduce_scatter(reduce_output_, inputs, ReduceOp::Sum);
  auto done = std::make_shared<int64_t>(0);
  reduce_done_ns_ = done;
  reduce_work_->then([done] { *done = profiler::now_ns(); });
  reduce_input_ = buffer;  // alive until the reduce-scatter completes
  if (root_) root_->reducing_.push_back(this);
  else finish_reduce();
}

void FSDPUnit::finish_reduces() {
  for (FSDPUnit* u : reducing_) u->finish_reduce();
  reducing_.clear();
}

void FSDPUnit::finish_completed_reduces() {
  std::erase_if(reducing_, [](FSDPUnit* u) {
    if (u->reduce_work_ && !u->reduce_work_->is_completed()) return false;
    u->finish_reduce();
    return true;
  });
}

void FSDPUnit::finish_reduce() {
  if (!reduce_output_.defined()) return;
  if (reduce_work_) {
    wait_for(reduce_work_, *group_, "fully_shard", "the reduce-scatter of unit '" + label() + "' (" + module_->name() + ")");
    if (profiler::enabled())
      profiler::record("reduce-scatter " + label(), "comm", reduce_launch_ns_,
                       reduce_done_ns_ && *reduce_done_ns_ ? *reduce_done_ns_ : profiler::now_ns(), "fsdp reduce-scatter");
  }
  NoGradGuard no_grad;
  const Bucket& bk = buckets_[reduce_bucket_];
  for (size_t i = bk.begin; i < bk.end; ++i) {
    Param& p = params_[i];
    if (!p.local.requires_grad()) continue;
    const auto [r0, r1] = bk.rows_of(p);
    if (r1 <= r0 && p.shard_numel() > 0) continue;
    Tensor g = reduce_output_.narrow(0, p.shard_offset + r0 * p.row_elems - bk.lo, (r1 - r0) * p.row_elems);
    if (g.scalar_type() != master_dtype_) g = native::to_dtype(g, master_dtype_);
    Tensor& local_grad = p.local.mutable_grad();
    if (r1 - r0 == p.shard_rows) {  // the whole shard: the reduce-scatter's output is its gradient
      g = g.view(p.local.sizes());
      if (local_grad.defined()) native::add_(local_grad, g);
      else local_grad = g;
      continue;
    }
    // Rows of it (Note [FSDP reduce-scatter buckets]): added into zeros the first time.
    if (!local_grad.defined()) local_grad = zeros(p.local.sizes(), TensorOptions(master_dtype_).device(device_));
    Tensor rows = local_grad.view({p.shard_numel()}).narrow(0, r0 * p.row_elems, (r1 - r0) * p.row_elems);
    native::add_(rows, g);
  }
  reduce_work_.reset();
  reduce_input_ = Tensor();
  reduce_output_ = Tensor();
  account_bytes(-reduce_bytes_);
  reduce_bytes_ = 0;
}

}  // namespace gr::distributed::fsdp
