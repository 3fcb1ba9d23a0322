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

#include "distributed/backends/process_group.h"

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

  // Op kinds in fingerprints (exposed for tests and messages).
  using Op = OpType;

 protected:
  WorkPtr do_allreduce(Tensor& tensor, ReduceOp op, const CallInfo& call) override;
  WorkPtr do_broadcast(Tensor& tensor, int root, const CallInfo& call) override;
  WorkPtr do_allgather(std::vector<Tensor>& outputs, const Tensor& input, const CallInfo& call) override;
  WorkPtr do_reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs, ReduceOp op,
                            const CallInfo& call) override;
  WorkPtr do_reduce(Tensor& tensor, int root, ReduceOp op, const CallInfo& call) override;
  WorkPtr do_barrier(const CallInfo& call) override;
  WorkPtr do_send(const Tensor& tensor, int dst, int tag, const CallInfo& call) override;
  WorkPtr do_recv(Tensor& tensor, int src, int tag, const CallInfo& call) override;
  // The wrapped group checks the device and reduces Avg its own way.
  TensorPlacement placement() const override { return {}; }
  bool reduces_avg() const override { return true; }

 private:
  // All-gathers the call's fingerprint, throws if any rank's differs, then issues it on the
  // wrapped group (`issue`), atomically: the issue order is the checked order.
  template <class Issue>
  WorkPtr checked(const CallInfo& call, Issue&& issue);
  void check(const CallInfo& call);
  void record_refused(const CallInfo& call, const std::string& why);
  void sync_timeout();

  ProcessGroupPtr inner_;
  ProcessGroupPtr checker_;
  std::mutex mutex_;  // check then issue, atomically: the issue order is the checked order
};

// `group` wrapped in a DebugProcessGroup when debug_level() is Detail; otherwise (and for
// a null group: a non-member of new_group) `group` itself.
ProcessGroupPtr wrap_for_debug(ProcessGroupPtr group);

}  // namespace gr::distributed
