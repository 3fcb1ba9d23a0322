// ProcessGroupMPI: collectives on Open MPI's non-blocking operations, for processes started
// by mpirun or srun (rank and size come from MPI; no store needed). Inside a node MPI moves
// data through shared memory.
#pragma once

#include <mpi.h>

#include "distributed/queued_process_group.h"

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
  WorkPtr allreduce(Tensor& tensor, ReduceOp op) override;
  WorkPtr broadcast(Tensor& tensor, int root) override;
  WorkPtr allgather(std::vector<Tensor>& outputs, const Tensor& input) override;
  WorkPtr reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs, ReduceOp op) override;
  WorkPtr reduce(Tensor& tensor, int root, ReduceOp op) override;
  WorkPtr barrier() override;
  WorkPtr send(const Tensor& tensor, int dst, int tag) override;
  WorkPtr recv(Tensor& tensor, int src, int tag) override;

 private:
  MPI_Comm comm_;
};

}  // namespace gr::distributed
