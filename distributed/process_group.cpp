// ProcessGroup argument checks and names.
#include "distributed/process_group.h"

#include "core/error.h"

namespace gr::distributed {

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return "sum";
    case ReduceOp::Avg: return "avg";
    case ReduceOp::Min: return "min";
    case ReduceOp::Max: return "max";
    case ReduceOp::Product: return "prod";
  }
  return "?";
}

ProcessGroup::ProcessGroup(int rank, int size) : rank_(rank), size_(size) {
  GR_CHECK(size >= 1, "ProcessGroup: size must be at least 1, got ", size);
  GR_CHECK(rank >= 0 && rank < size, "ProcessGroup: rank ", rank, " is not in [0, ", size, ")");
}

void ProcessGroup::check_tensor(const Tensor& t, const char* op) const {
  GR_CHECK(t.defined(), backend_name(), " ", op, ": tensor is undefined");
  GR_CHECK(t.is_contiguous(), backend_name(), " ", op, ": tensors must be contiguous, got sizes ", t.sizes(),
           " strides ", t.strides());
  ScalarType d = t.scalar_type();
  GR_CHECK(d == kFloat32 || d == kFloat64 || d == kInt64 || d == kBFloat16 || d == kFloat16 || d == kUInt8, backend_name(),
           " ", op, ": dtype ", d, " is not supported");
}

void ProcessGroup::check_cpu_tensor(const Tensor& t, const char* op) const {
  check_tensor(t, op);
  GR_CHECK(t.is_cpu(), backend_name(), " ", op, ": this backend moves CPU tensors, got one on ", t.device(),
           " (use the nccl backend for CUDA tensors, or copy it to the CPU first)");
}

void ProcessGroup::check_rank(int r, const char* what, const char* op) const {
  GR_CHECK(r >= 0 && r < size_, backend_name(), " ", op, ": ", what, " ", r, " is not a rank of this group (size ",
           size_, ")");
}

void ProcessGroup::check_avg(ReduceOp op, const Tensor& t, const char* op_name) const {
  GR_CHECK(op != ReduceOp::Avg || t.is_floating_point(), backend_name(), " ", op_name,
           ": avg needs a floating point tensor, got ", t.scalar_type());
}

void ProcessGroup::check_per_rank_tensors(const std::vector<Tensor>& list, const Tensor& like, const char* op,
                                          const char* role, const char* like_name) const {
  GR_CHECK(static_cast<int>(list.size()) == size_, backend_name(), " ", op, ": expected ", size_, " ", role,
           " tensors, got ", list.size());
  for (const Tensor& t : list)
    GR_CHECK(t.defined() && t.sizes() == like.sizes() && t.scalar_type() == like.scalar_type() && t.is_cpu(),
             backend_name(), " ", op, ": every ", role, " must be a CPU tensor with ", like_name, " shape ",
             like.sizes(), " and dtype ", like.scalar_type());
}

}  // namespace gr::distributed
