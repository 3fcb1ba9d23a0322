// A unit's unshard (all-gather of every rank's flat shard, copy-out into the parameters'
// unsharded storage) and reshard (the storage released). See Note [FSDP units].
#include <algorithm>

#include "autograd/grad_mode.h"
#include "core/factory.h"
#include "core/native/copy.h"
#include "distributed/fsdp/fsdp_unit.h"

namespace gr::distributed::fsdp {

namespace {

// gathered: N rank-major shards of S elements; flat: the unsharded parameters back to back.
// Parameter p's rows [r * c, (r + 1) * c) are at gathered[r * S + p.shard_offset]; the ranks
// holding a full chunk are copied in one strided copy, the rank holding the last partial
// chunk in a second one (torch.chunk's layout: only the last non-empty chunk is short).
void copy_out(const Tensor& gathered, int64_t S, const Tensor& flat, const FSDPUnit::Param& p) {
  if (p.numel() == 0) return;
  const int64_t chunk = p.shard_numel(), full = p.rows / p.shard_rows;
  const int64_t rest = (p.rows - full * p.shard_rows) * p.row_elems;
  if (full > 0) {
    Tensor src = make_view(gathered, {full, chunk}, {S, 1}, gathered.storage_offset() + p.shard_offset);
    native::copy_(flat.narrow(0, p.unsharded_offset, full * chunk).view({full, chunk}), src);
  }
  if (rest > 0)
    native::copy_(flat.narrow(0, p.unsharded_offset + full * chunk, rest), gathered.narrow(0, full * S + p.shard_offset, rest));
}

}  // namespace

void FSDPUnit::unshard() {
  if (unsharded_state_) return;
  if (params_.empty()) {
    unsharded_state_ = true;
    return;
  }
  NoGradGuard no_grad;
  const int64_t n = group_->size(), S = shard_elems_;
  const Tensor source = compute_dtype_ == master_dtype_ ? shard_ : native::to_dtype(shard_, compute_dtype_);
  Tensor gathered = source;
  if (n > 1) {
    gathered = empty({n * S}, TensorOptions(compute_dtype_).device(device_));
    std::vector<Tensor> outputs;
    for (int64_t r = 0; r < n; ++r) outputs.push_back(gathered.narrow(0, r * S, S));
    wait_for(group_->allgather(outputs, source), *group_, "fully_shard",
             "the all-gather of unit '" + name_ + "' (" + module_->name() + ")");
  }
  // The gather is not an in-place change autograd should see (Note [FSDP units]).
  const uint32_t version = unsharded_.version();
  unsharded_.reallocate(static_cast<size_t>(unsharded_elems_) * element_size(compute_dtype_));
  const Tensor flat = make_view(params_[0].param, {unsharded_elems_}, {1}, 0);
  for (const Param& p : params_) copy_out(gathered, S, flat, p);
  unsharded_.set_version(version);
  unsharded_state_ = true;
}

void FSDPUnit::reshard() {
  if (!unsharded_state_) return;
  if (!params_.empty()) unsharded_.release(released_reason());
  unsharded_state_ = false;
}

}  // namespace gr::distributed::fsdp
