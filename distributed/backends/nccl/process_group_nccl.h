// ProcessGroupNCCL: collectives on CUDA tensors with NCCL (as torch's nccl backend). One
// communicator per group on one device, created from rank 0's unique id shared through the
// Store, at the first collective (on its tensors' device) or at construction (device_id).
// Collectives run on the group's own high-priority stream, ordered after the caller's
// current stream by an event; Work::wait() orders the caller's stream after the collective
// without blocking the host (Note [Work and streams], Note [NCCL work completion]). A
// watchdog thread aborts the communicator when a collective outlives the timeout.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cuda_kernels/event.h"
#include "cuda_kernels/stream.h"
#include "distributed/backends/process_group.h"
#include "distributed/store/store.h"

namespace gr::distributed {

namespace nccl {
class Comm;
class Health;
class Watchdog;
}  // namespace nccl

struct NCCLOptions {
  // >= 0: create the communicator on cuda:device_id in the constructor (every rank's
  // constructor then takes part in the rendezvous). -1: at the first collective, on the
  // device of its tensors (barrier() first: the current device).
  int device_id = -1;
  std::chrono::milliseconds timeout{std::chrono::minutes(30)};
};

class ProcessGroupNCCL : public ProcessGroup {
 public:
  // Throws when no CUDA device is visible.
  ProcessGroupNCCL(std::shared_ptr<Store> store, int rank, int size, const NCCLOptions& options = {});
  // Waits (bounded) for collectives in flight, then finalizes the communicator (or aborts
  // it when they do not finish).
  ~ProcessGroupNCCL() override;

  std::string backend_name() const override { return "nccl"; }

  // All-reduces every tensor (any shapes, dtypes) in one NCCL group call (one launch, one
  // Work), e.g. many small gradients.
  WorkPtr allreduce_coalesced(std::vector<Tensor>& tensors, ReduceOp op = ReduceOp::Sum);

  // The group's device, -1 before its communicator exists.
  int device() const;
  // The communication stream (a null handle before the communicator exists).
  cuda::Stream stream() const;
  // Collectives issued and not yet seen complete by the watchdog.
  size_t in_flight() const;

 protected:
  WorkPtr do_allreduce(Tensor& tensor, ReduceOp op, const CallInfo& call) override;
  WorkPtr do_broadcast(Tensor& tensor, int root, const CallInfo& call) override;
  WorkPtr do_allgather(std::vector<Tensor>& outputs, const Tensor& input, const CallInfo& call) override;
  WorkPtr do_reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs, ReduceOp op,
                            const CallInfo& call) override;
  WorkPtr do_reduce(Tensor& tensor, int root, ReduceOp op, const CallInfo& call) override;
  // A one-element all-reduce; its wait() blocks the host until every rank got there and
  // every collective issued before it on this group has completed.
  WorkPtr do_barrier(const CallInfo& call) override;
  // NCCL matches the messages between two ranks in issue order: `tag` is not used.
  WorkPtr do_send(const Tensor& tensor, int dst, int tag, const CallInfo& call) override;
  WorkPtr do_recv(Tensor& tensor, int src, int tag, const CallInfo& call) override;
  // CUDA tensors on the group's device (any device before the communicator exists).
  TensorPlacement placement() const override { return {kCUDA, device()}; }
  // ncclAvg divides inside NCCL, in the reduction's type.
  bool reduces_avg() const override { return true; }
  bool sends_to_self() const override { return false; }

 private:
  using Body = std::function<void(cudaStream_t stream, std::vector<Tensor>& keep_alive)>;
  // Issues one collective under the group's lock: creates the communicator if needed, orders
  // the communication stream after the caller's stream, runs `body` (the NCCL calls), records
  // the end event, and hands the work to the watchdog. `outputs` become Work::result();
  // they, `keep_alive` (inputs) and what `body` adds to it (temporaries) live until the
  // collective completed on the GPU.
  WorkPtr issue(const CallInfo& call, int device, std::vector<Tensor> outputs, std::vector<Tensor> keep_alive,
                const Body& body, bool blocking_wait = false);
  void ensure_comm(int device);  // with mutex_ held
  // The device of a collective's tensors; -1 for none.
  int device_of(const Tensor& t) const { return t.defined() ? t.device().index() : -1; }

  std::shared_ptr<Store> store_;
  std::shared_ptr<nccl::Health> health_;
  std::shared_ptr<nccl::Watchdog> watchdog_;
  mutable std::mutex mutex_;  // issuing: one thread at a time talks to the communicator
  std::shared_ptr<nccl::Comm> comm_;
  int device_ = -1;
  cuda::Stream stream_{nullptr, -1};  // from the device's highest-priority pool
  cuda::Event ready_;                 // recorded on the caller's stream before each collective
  Tensor barrier_buffer_;
};

}  // namespace gr::distributed
