// A unit's gathers: the all-gather of every rank's flat shard issued (by the unit's own hook
// or one unit ahead, Note [FSDP prefetch]), waited for and copied out into the parameters'
// unsharded storage; the release of that storage; GRADRING_DISTRIBUTED_DEBUG=DETAIL's check
// that every rank runs the same unit's collective; the trace file. See Note [FSDP units].
#include <algorithm>
#include <filesystem>
#include <sstream>

#include "autograd/engine.h"
#include "autograd/grad_mode.h"
#include "core/factory.h"
#include "core/native/copy/copy.h"
#include "core/profiler.h"
#include "distributed/ddp/control_tensor.h"
#include "distributed/fsdp/fsdp_unit.h"

namespace gr::distributed::fsdp {

// Note [FSDP prefetch]
// Gathering a unit's parameters only when its forward (or backward) starts leaves the compute
// idle for the whole all-gather. FSDP overlaps them: each unit's pre-forward hook gathers its
// own parameters (issued one unit earlier, so normally already there: it waits and copies
// them out), then issues the all-gather of the unit that comes next in forward, which runs on
// the backend's threads while this unit computes (FSDP2's implicit forward prefetch of one unit, which on a
// GPU comes from the CPU running ahead; on CPU backends it has to be explicit). Backward does
// the same in backward order: the pre-backward hook issues the gather of the unit whose
// backward comes next. The orders are learned: the forward order from the first forward of
// the root (the order the pre-forward hooks fired in), the backward order from the first
// backward (the order the pre-backward hooks fired in), as FSDP learns its backward prefetch
// order; the first iteration does not prefetch. At most two units are gathered at a time
// (plus the root, which keeps its parameters from its forward to its backward), and one
// all-gather is in flight: a unit's own is waited for before the next one is issued, as
// FSDP2's hooks do (Note [FSDP memory bound] in fsdp_backward.cpp). Every rank
// issues the same gathers in the same order, since the orders are the same everywhere when
// the program is; GRADRING_DISTRIBUTED_DEBUG=DETAIL checks it before every gather and
// reduce-scatter. A prefetched unit that then does not run is waited for and freed at the end
// of the forward (without grad) or of the backward.
// FSDPModule::set_modules_to_forward_prefetch / set_modules_to_backward_prefetch (torch's
// explicit prefetch) replace a unit's learned one-ahead by a list, issued in its order right
// after the unit's own gather is copied out, from the first iteration on; a list of two or more
// has that many gathers in flight and buffers alive at once; an empty list is the default, as
// in torch. FSDPModule::set_prefetch_enabled(false) stores an empty list here: then each unit's
// gather is issued by its own hook and waited for in full (the memory bound's choice, Note
// [FSDP memory bound] in fsdp_backward.cpp). Gathers in pieces
// (all_gather_bucket_cap_mb) prefetch their first piece only; the rest arrive one piece ahead
// of the copy-out in wait_gather.

void copy_rows(const Tensor& rank_major, int64_t S_b, int64_t col, const Tensor& flat, const FSDPUnit::Param& p,
               int64_t r0, int64_t r1, bool to_rank_major) {
  if (r1 <= r0 || p.numel() == 0) return;
  const int64_t c = p.shard_rows, re = p.row_elems;
  const int64_t full = p.rows / c, short_rows = p.rows - full * c;  // torch.chunk: only the last non-empty chunk is short
  auto copy = [to_rank_major](const Tensor& buf, const Tensor& values) {
    native::copy_(to_rank_major ? buf : values, to_rank_major ? values : buf);
  };
  const int64_t width = (r1 - r0) * re;
  if (full > 0)
    copy(make_view(rank_major, {full, width}, {S_b, 1}, rank_major.storage_offset() + col),
         make_view(flat, {full, width}, {c * re, 1}, flat.storage_offset() + r0 * re));
  const int64_t rest = std::min(r1, short_rows) - r0;
  if (rest > 0)
    copy(rank_major.narrow(0, full * S_b + col, rest * re), flat.narrow(0, (full * c + r0) * re, rest * re));
}


void FSDPUnit::check_same_unit_everywhere(const char* what) const {
  if (!detail_ || group_->size() == 1) return;
  const int64_t n = group_->size();
  Tensor mine = control_tensor({static_cast<int64_t>(index_)}, device_);
  Tensor all = control_tensor(std::vector<int64_t>(static_cast<size_t>(n), 0), device_);
  std::vector<Tensor> outputs;
  for (int64_t r = 0; r < n; ++r) outputs.push_back(all.narrow(0, r, 1));
  wait_for(group_->allgather(outputs, mine), *group_, "fully_shard", "the DETAIL check of the unit order");
  const std::vector<int64_t> got = host_values(all);
  if (std::all_of(got.begin(), got.end(), [&](int64_t i) { return i == got[0]; })) return;
  std::ostringstream msg;
  msg << "fully_shard (GRADRING_DISTRIBUTED_DEBUG=DETAIL): the ranks are about to run different units' collectives: ";
  const std::vector<FSDPUnit*>& units = root_->units_;
  for (int64_t r = 0; r < n; ++r) {
    const size_t i = static_cast<size_t>(got[static_cast<size_t>(r)]);
    msg << (r ? ", " : "") << "rank " << r << " " << what << " unit '"
        << (i < units.size() ? units[i]->label() : "?") << "' (#" << i << ")";
  }
  msg << ". Every rank must run the same units in the same order (the same model, the same forward and backward).";
  GR_ERROR(msg.str());
}

void FSDPUnit::issue_gather() {
  if (gather_ != Gather::None) return;
  if (params_.empty()) {
    gather_ = Gather::Done;
    return;
  }
  NoGradGuard no_grad;
  gather_source_ = compute_dtype_ == master_dtype_ ? shard_ : native::to_dtype(shard_, compute_dtype_);
  gather_bytes_ = gather_source_.is_same(shard_) ? 0 : static_cast<int64_t>(gather_source_.nbytes());
  account_bytes(gather_bytes_);
  if (group_->size() > 1) check_same_unit_everywhere("gathers");
  issue_piece(0);
  gather_ = Gather::Issued;
}

// The all-gather of gather_pieces_[k] into gather_buffer_, rank-major [N, S_k].
void FSDPUnit::issue_piece(size_t k) {
  const Bucket& piece = gather_pieces_[k];
  const int64_t n = group_->size(), S = piece.hi - piece.lo;
  const Tensor source = gather_source_.narrow(0, piece.lo, S);
  gather_issue_ns_ = profiler::now_ns();
  gather_done_ns_.reset();
  if (n == 1) {
    gather_buffer_ = source;  // one rank: its shard is the whole unit
    return;
  }
  gather_buffer_ = empty({n * S}, TensorOptions(compute_dtype_).device(device_));
  account_bytes(static_cast<int64_t>(gather_buffer_.nbytes()));
  std::vector<Tensor> outputs;
  for (int64_t r = 0; r < n; ++r) outputs.push_back(gather_buffer_.narrow(0, r * S, S));
  gather_work_ = group_->allgather(outputs, source);
  auto done = std::make_shared<int64_t>(0);
  gather_done_ns_ = done;
  gather_work_->then([done] { *done = profiler::now_ns(); });
}

void FSDPUnit::wait_gather() {
  if (gather_ != Gather::Issued) return;
  NoGradGuard no_grad;
  const bool multi_rank = group_->size() > 1;
  const Tensor flat = make_view(params_[0].param, {unsharded_elems_}, {1}, 0);
  // The gather is not an in-place change autograd should see (Note [FSDP units]).
  const uint32_t version = unsharded_.version();
  for (size_t k = 0; k < gather_pieces_.size(); ++k) {
    {
      profiler::ScopedEvent span(profiler::enabled() ? "FSDP wait all-gather " + label() : std::string(), "fsdp");
      if (gather_work_)
        wait_for(gather_work_, *group_, "fully_shard", "the all-gather of unit '" + label() + "' (" + module_->name() + ")");
    }
    gather_work_.reset();
    // One span per piece, from its issue to its arrival (a prefetched first piece's from the prefetch).
    if (profiler::enabled()) {
      const int64_t end = gather_done_ns_ && *gather_done_ns_ ? *gather_done_ns_ : profiler::now_ns();
      profiler::record("all-gather " + label(), "comm", gather_issue_ns_, end, "fsdp all-gather");
    }
    if (k == 0) {
      unsharded_.reallocate(static_cast<size_t>(unsharded_elems_) * element_size(compute_dtype_));
      account_bytes(static_cast<int64_t>(unsharded_.nbytes()));
    }
    // Gathering in pieces (all_gather_bucket_cap_mb): the next piece's gather runs while this
    // one is copied out; two pieces' buffers at most.
    const Tensor gathered = std::move(gather_buffer_);
    if (k + 1 < gather_pieces_.size()) issue_piece(k + 1);
    const Bucket& piece = gather_pieces_[k];
    for (size_t i = piece.begin; i < piece.end; ++i) {
      const Param& p = params_[i];
      const auto [r0, r1] = piece.rows_of(p);
      copy_rows(gathered, piece.hi - piece.lo, p.shard_offset + r0 * p.row_elems - piece.lo,
                flat.narrow(0, p.unsharded_offset, p.numel()), p, r0, r1, /*to_rank_major=*/false);
    }
    if (multi_rank) account_bytes(-static_cast<int64_t>(gathered.nbytes()));
  }
  unsharded_.set_version(version);
  gather_source_ = gather_buffer_ = Tensor();
  account_bytes(-gather_bytes_);
  gather_bytes_ = 0;
  gather_ = Gather::Done;
}

void FSDPUnit::prefetch(const std::optional<std::vector<std::weak_ptr<FSDPUnit>>>& explicit_units, FSDPUnit* learned) {
  if (!explicit_units) {
    if (learned) learned->issue_gather();
    return;
  }
  for (const std::weak_ptr<FSDPUnit>& weak : *explicit_units) {
    std::shared_ptr<FSDPUnit> unit = weak.lock();
    if (!unit) continue;  // its module is gone
    GR_CHECK(unit->root_ == root_, "fully_shard: unit '", label(), "' (", module_->name(), ") is set to prefetch ",
             unit->module_->name(), ", which is not a unit of its tree (set_modules_to_",
             autograd::in_backward() ? "backward" : "forward", "_prefetch)");
    unit->issue_gather();
  }
}

void FSDPUnit::unshard() {
  issue_gather();
  wait_gather();
}

void FSDPUnit::reshard() {
  if (gather_ == Gather::Issued) wait_gather();  // a prefetch that was not used: its buffers are in flight
  if (gather_ != Gather::Done) return;
  if (!params_.empty()) {
    account_bytes(-static_cast<int64_t>(unsharded_.nbytes()));
    unsharded_.release(released_reason());
  }
  gather_ = Gather::None;
}

std::string FSDPUnit::write_chrome_trace(const std::string& dir) const {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  GR_CHECK(!ec, "FSDPModule::write_chrome_trace: cannot create '", dir, "': ", ec.message());
  const std::string path = (std::filesystem::path(dir) / ("rank" + std::to_string(group_->rank()) + ".json")).string();
  profiler::write_chrome_trace(path, group_->rank(), "rank " + std::to_string(group_->rank()));
  return path;
}

}  // namespace gr::distributed::fsdp
