// GRADRING_DISTRIBUTED_DEBUG (OFF, INFO, DETAIL), as torch's TORCH_DISTRIBUTED_DEBUG, and
// DebugProcessGroup (as torch's ProcessGroupWrapper), which init_process_group and new_group
// put around every group under DETAIL. Before each collective it all-gathers a fingerprint
// of the call (sequence number, op, reduce op, dtype, shape, root, tensor count) from every
// rank and throws a gr::Error naming the differing calls on every rank, instead of letting
// mismatched collectives hang or produce garbage. The check is synchronous: it blocks the
// caller for one small all-gather per collective (a debugging mode, slower). send/recv pass
// through unchecked. Every rank must run with the same setting.
#pragma once

#include <cstdint>
#include <mutex>

#include "distributed/process_group.h"

namespace gr::distributed {

enum class DebugLevel { Off, Info, Detail };
// Parses GRADRING_DISTRIBUTED_DEBUG (case-insensitive; unset or empty is Off) at each call;
// any other value throws a gr::Error listing the valid ones.
DebugLevel debug_level();
const char* debug_level_name(DebugLevel level);

class DebugProcessGroup : public ProcessGroup {
 public:
  // Wraps `inner`; the checks run on `checker` (default: `inner` itself). A backend that
  // cannot all-gather CPU int64 tensors (NCCL) needs a CPU companion group as `checker`.
  explicit DebugProcessGroup(ProcessGroupPtr inner, ProcessGroupPtr checker = nullptr);

  std::string backend_name() const override { return inner_->backend_name(); }
  const ProcessGroupPtr& inner() const { return inner_; }

  WorkPtr allreduce(Tensor& tensor, ReduceOp op) override;
  WorkPtr broadcast(Tensor& tensor, int root) override;
  WorkPtr allgather(std::vector<Tensor>& outputs, const Tensor& input) override;
  WorkPtr reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs, ReduceOp op) override;
  WorkPtr reduce(Tensor& tensor, int root, ReduceOp op) override;
  WorkPtr barrier() override;
  WorkPtr send(const Tensor& tensor, int dst, int tag) override;
  WorkPtr recv(Tensor& tensor, int src, int tag) override;

  // Op kinds in fingerprints (exposed for tests and messages).
  enum class Op : int64_t { Allreduce = 1, Broadcast, Allgather, ReduceScatter, Reduce, Barrier };

 private:
  // All-gathers this call's fingerprint and throws if any rank's differs.
  void check(Op op, const Tensor* t, int64_t reduce_op, int64_t root, int64_t tensors);
  void sync_timeout();

  ProcessGroupPtr inner_;
  ProcessGroupPtr checker_;
  std::mutex mutex_;  // check then issue, atomically: the issue order is the checked order
  int64_t sequence_ = 0;
};

// `group` wrapped in a DebugProcessGroup when debug_level() is Detail; otherwise (and for
// a null group: a non-member of new_group) `group` itself.
ProcessGroupPtr wrap_for_debug(ProcessGroupPtr group);

}  // namespace gr::distributed
