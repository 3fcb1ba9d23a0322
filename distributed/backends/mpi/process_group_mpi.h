// ProcessGroupMPI: collectives on Open MPI, for processes started by mpirun or srun (rank and
// size come from MPI; no store needed). Inside a node MPI moves data through shared memory.
// All-reduce uses the blocking MPI_Allreduce (the fast one) under a watchdog that aborts the
// job past the timeout; the other collectives are non-blocking calls polled to the timeout.
#pragma once

#include <mpi.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "distributed/backends/queued_process_group.h"

namespace gr::distributed {

class ProcessGroupMPI : public QueuedProcessGroup {
 public:
  // A group over `comm` (MPI_COMM_WORLD for the default group); takes ownership of a
  // communicator other than MPI_COMM_WORLD.
  explicit ProcessGroupMPI(MPI_Comm comm);
  ~ProcessGroupMPI() override;
  // Initialises MPI (once per process, thread level SERIALIZED or better) and returns the
  // group of `members` of MPI_COMM_WORLD (all ranks if empty); null on non-members.
  static std::shared_ptr<ProcessGroupMPI> create(const std::vector<int>& members = {});

  std::string backend_name() const override { return "mpi"; }

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

 private:
  // Runs a blocking MPI call under the watchdog's eye.
  template <class F>
  void blocking(F&& call, const char* what);
  void watch();

  MPI_Comm comm_;
  std::mutex watch_mutex_;
  std::condition_variable watch_cv_;
  const char* blocking_what_ = nullptr;  // the blocking call in progress, if any
  std::chrono::steady_clock::time_point blocking_since_;
  bool watch_stop_ = false;
  std::thread watchdog_;
};

}  // namespace gr::distributed
