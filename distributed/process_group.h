// ProcessGroup: a set of processes (ranks 0..size-1) and the collectives they run together.
// Every collective is asynchronous and returns a Work; all ranks must issue the same
// collectives, with the same shapes and dtypes, in the same order.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "distributed/work.h"

namespace gr::distributed {

enum class ReduceOp { Sum, Avg, Min, Max, Product };
const char* reduce_op_name(ReduceOp op);

using WorkPtr = std::shared_ptr<Work>;

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
  virtual WorkPtr allreduce(Tensor& tensor, ReduceOp op = ReduceOp::Sum) = 0;
  // root's tensor is copied into every rank's `tensor`.
  virtual WorkPtr broadcast(Tensor& tensor, int root = 0) = 0;
  // outputs[r] receives rank r's input (outputs has size() tensors shaped like input).
  virtual WorkPtr allgather(std::vector<Tensor>& outputs, const Tensor& input) = 0;
  // output receives the reduction over ranks of inputs[rank()] (inputs has size() tensors).
  virtual WorkPtr reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs, ReduceOp op = ReduceOp::Sum) = 0;
  // The reduction lands in root's `tensor`; other ranks' tensors are unspecified after it.
  virtual WorkPtr reduce(Tensor& tensor, int root = 0, ReduceOp op = ReduceOp::Sum) = 0;
  virtual WorkPtr barrier() = 0;
  // Point to point; `tag` tells concurrent messages between the same pair apart.
  virtual WorkPtr send(const Tensor& tensor, int dst, int tag = 0) = 0;
  virtual WorkPtr recv(Tensor& tensor, int src, int tag = 0) = 0;

  // Upper bound for one collective; a collective that takes longer fails with an error
  // naming it (see Work::wait).
  std::chrono::milliseconds timeout() const { return timeout_; }
  void set_timeout(std::chrono::milliseconds t) { timeout_ = t; }

 protected:
  // Argument checks shared by every backend; `op` names the collective in errors.
  void check_tensor(const Tensor& t, const char* op) const;
  // check_tensor, and t must be a CPU tensor: what the CPU backends (Gloo, MPI) move.
  void check_cpu_tensor(const Tensor& t, const char* op) const;
  void check_rank(int r, const char* what, const char* op) const;
  // ReduceOp::Avg needs a floating point tensor.
  void check_avg(ReduceOp op, const Tensor& t, const char* op_name) const;
  // `list` holds size() CPU tensors shaped and typed like `like`: allgather's outputs (role
  // "output", like "the input's"), reduce_scatter's inputs (role "input").
  void check_per_rank_tensors(const std::vector<Tensor>& list, const Tensor& like, const char* op, const char* role,
                              const char* like_name) const;

  int rank_;
  int size_;
  std::chrono::milliseconds timeout_{std::chrono::minutes(30)};
};

using ProcessGroupPtr = std::shared_ptr<ProcessGroup>;

}  // namespace gr::distributed
