// ProcessGroup: a set of processes (ranks 0..size-1) and the collectives they run together.
// Every collective is asynchronous and returns a Work; all ranks must issue the same
// collectives, with the same shapes and dtypes, in the same order. As in c10d, the public
// collectives are not virtual: they do what every backend needs (Note [The collective
// front]) and then call the backend's small do_* (Gloo, shm, MPI, NCCL, the DETAIL checker).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/tensor.h"
#include "distributed/backends/flight_recorder.h"
#include "distributed/backends/work.h"

namespace gr::distributed {

enum class ReduceOp { Sum, Avg, Min, Max, Product };
const char* reduce_op_name(ReduceOp op);

using WorkPtr = std::shared_ptr<Work>;

// The operations of a group; the numbers are part of the DETAIL checker's fingerprints.
enum class OpType : int64_t { Allreduce = 1, Broadcast, Allgather, ReduceScatter, Reduce, Barrier, Send, Recv };
const char* op_type_name(OpType op);

// Where a backend's tensors must live (every argument check compares against it).
struct TensorPlacement {
  std::optional<DeviceType> type;  // kCPU (gloo, shm, mpi) or kCUDA (nccl); none: any (a wrapper)
  int index = -1;                  // the group's device once it has one; -1: any
};

// The call being checked, as argument errors name it.
struct CheckContext {
  std::string backend;
  std::string_view op;
  int rank = 0;
  int size = 1;
  TensorPlacement placement;
};
// "<backend> <op> on rank <rank>": how every argument error starts.
std::ostream& operator<<(std::ostream& out, const CheckContext& c);
// Defined, on the placement's device, contiguous, of a dtype the backends carry
// (float32, float64, int64, uint8, bfloat16, float16).
void check_tensor(const Tensor& t, const CheckContext& c);
// A non-empty list whose tensors pass check_tensor, all on the first one's device.
void check_tensors(const std::vector<Tensor>& ts, const CheckContext& c);
// `list` holds size tensors that pass check_tensor, shaped, typed and placed like `like`:
// allgather's outputs (role "output", like_name "the input's"), reduce_scatter's inputs.
void check_per_rank_tensors(const std::vector<Tensor>& list, const Tensor& like, const CheckContext& c, const char* role,
                            const char* like_name);
// `r` is a rank of the group; `what` ("root", "destination", "source") names it.
void check_rank(int r, const char* what, const CheckContext& c);
// ReduceOp::Avg needs a floating point tensor.
void check_reduce_op(ReduceOp op, ScalarType t, const CheckContext& c);

// One operation as the front has checked, numbered and named it, handed to the backend's do_*.
struct CallInfo {
  OpType type = OpType::Barrier;
  std::string description;       // "gloo allreduce (sum) float32 [1000] #17 on rank 0": Work's name, errors
  uint64_t sequence = 0;         // collectives only: 0, 1, 2, ... in this group's issue order
  std::optional<ReduceOp> reduce_op;  // as the caller asked (Avg even where the front emulates it)
  int root = -1;
  int64_t tensors = 0;           // how many tensors the call moves (allgather: outputs, ...)
  Tensor tensor;                 // the one whose dtype and shape describe the call; undefined: none
  FlightEntry flight;            // its flight recorder entry (empty when the recorder is off): the Work's
};

class ProcessGroup {
 public:
  ProcessGroup(int rank, int size);
  virtual ~ProcessGroup() = default;
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  virtual std::string backend_name() const = 0;

  // In place on `tensor` (every rank's tensor has the same shape and dtype).
  WorkPtr allreduce(Tensor& tensor, ReduceOp op = ReduceOp::Sum);
  // root's tensor is copied into every rank's `tensor`.
  WorkPtr broadcast(Tensor& tensor, int root = 0);
  // outputs[r] receives rank r's input (outputs has size() tensors shaped like input).
  WorkPtr allgather(std::vector<Tensor>& outputs, const Tensor& input);
  // output receives the reduction over ranks of inputs[rank()] (inputs has size() tensors).
  WorkPtr reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs, ReduceOp op = ReduceOp::Sum);
  // The reduction lands in root's `tensor`; other ranks' tensors are unspecified after it.
  WorkPtr reduce(Tensor& tensor, int root = 0, ReduceOp op = ReduceOp::Sum);
  WorkPtr barrier();
  // Point to point; `tag` tells concurrent messages between the same pair apart.
  WorkPtr send(const Tensor& tensor, int dst, int tag = 0);
  WorkPtr recv(Tensor& tensor, int src, int tag = 0);

  // Upper bound for one collective; a collective that takes longer fails with an error
  // naming it (see Work::wait).
  std::chrono::milliseconds timeout() const { return timeout_; }
  void set_timeout(std::chrono::milliseconds t) { timeout_ = t; }

  // This group's flight recorder (null when GRADRING_FLIGHT_RECORDER_SIZE=0), and the name
  // and default-group ranks its dumps give it (init_process_group: "default_pg",
  // new_group: "group<N>"). See flight_recorder.h.
  const std::shared_ptr<FlightRecorder>& flight_recorder() const { return flight_; }
  void set_group_name(std::string name, std::vector<int> ranks);

 protected:
  // The backends. Arguments are checked; `op` is what to compute (Sum where the front
  // emulates Avg); `call` names the operation (its description is the Work's).
  virtual WorkPtr do_allreduce(Tensor& tensor, ReduceOp op, const CallInfo& call) = 0;
  virtual WorkPtr do_broadcast(Tensor& tensor, int root, const CallInfo& call) = 0;
  virtual WorkPtr do_allgather(std::vector<Tensor>& outputs, const Tensor& input, const CallInfo& call) = 0;
  virtual WorkPtr do_reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs, ReduceOp op,
                                    const CallInfo& call) = 0;
  virtual WorkPtr do_reduce(Tensor& tensor, int root, ReduceOp op, const CallInfo& call) = 0;
  virtual WorkPtr do_barrier(const CallInfo& call) = 0;
  virtual WorkPtr do_send(const Tensor& tensor, int dst, int tag, const CallInfo& call) = 0;
  virtual WorkPtr do_recv(Tensor& tensor, int src, int tag, const CallInfo& call) = 0;

  // Where this backend's tensors live (default: the CPU).
  virtual TensorPlacement placement() const { return {kCPU, -1}; }
  // Whether do_* compute ReduceOp::Avg themselves (NCCL's ncclAvg; a wrapper passes it on).
  // Otherwise the front asks for Sum and divides by size() when the collective finishes.
  virtual bool reduces_avg() const { return false; }
  // Whether a rank may send to and receive from itself (Gloo, shm and NCCL cannot).
  virtual bool sends_to_self() const { return true; }

  CheckContext check_context(std::string_view op) const { return {backend_name(), op, rank_, size_, placement()}; }
  // "gloo allreduce (sum) float32 [1000] #17 on rank 0"; a collective takes the next sequence
  // number (returned in `sequence`), point-to-point operations none.
  std::string describe(std::string_view op, const Tensor& t, std::string_view detail, uint64_t* sequence);
  // A collective numbered, named (`name`, default: the op's) and recorded as the public ones
  // are, for a backend's own collectives (NCCL's allreduce_coalesced).
  CallInfo collective(OpType type, const Tensor& t, std::optional<ReduceOp> op, int root, int64_t tensors,
                      std::string_view name = {});
  // Groups that only pass calls on to another group (which records them) record nothing.
  void disable_flight_recorder() { flight_.reset(); }

  int rank_;
  int size_;
  std::chrono::milliseconds timeout_{std::chrono::minutes(30)};

 private:
  // It records the calls it refuses in the wrapped group's flight record (Note [Refused calls
  // in the flight record] in process_group_debug.cpp).
  friend class DebugProcessGroup;

  CallInfo point_to_point(OpType type, const Tensor& t, int peer, int tag);
  // The Sum the backend computes, and the division that makes it an Avg (on `divide_on`).
  ReduceOp backend_op(ReduceOp op) const { return op == ReduceOp::Avg && !reduces_avg() ? ReduceOp::Sum : op; }
  WorkPtr finish_avg(WorkPtr work, ReduceOp op, const Tensor& t, bool divide_here) const;

  // Enters `call` in the flight recorder (the hot path: Note [Flight recorder slots]).
  void record(CallInfo& call, int peer, int tag);

  std::atomic<uint64_t> sequence_{0};
  std::shared_ptr<FlightRecorder> flight_;
  std::atomic<bool> flight_backend_known_{false};
};

using ProcessGroupPtr = std::shared_ptr<ProcessGroup>;

// Waits for `work` up to the group's timeout; a failure becomes a gr::Error
// "<who> on rank <r> of <n>: <what> failed: <the collective's error>".
void wait_for(const WorkPtr& work, const ProcessGroup& group, std::string_view who, std::string_view what);

}  // namespace gr::distributed
