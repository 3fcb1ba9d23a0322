// Tensor checks, dtype/op mapping and error text of the NCCL process group.
#include "distributed/nccl/nccl_utils.h"

#include "core/error.h"

namespace gr::distributed::nccl {

void check_tensor(const Tensor& t, int device, const char* op, int rank) {
  GR_CHECK(t.defined(), "nccl ", op, " on rank ", rank, ": tensor is undefined");
  GR_CHECK(t.is_cuda(), "nccl ", op, " on rank ", rank, ": tensors must be CUDA tensors, got a ", t.device(),
           " tensor (move it with .to(Device(kCUDA, i)), or use the gloo backend for CPU tensors)");
  GR_CHECK(device < 0 || t.device().index == device, "nccl ", op, " on rank ", rank, ": tensor is on ", t.device(),
           " but this process group uses cuda:", device, " (one device per group and process)");
  GR_CHECK(t.is_contiguous(), "nccl ", op, " on rank ", rank, ": tensors must be contiguous, got sizes ", t.sizes(),
           " strides ", t.strides());
  to_nccl(t.scalar_type());  // throws for an unsupported dtype
}

void check_tensors(const std::vector<Tensor>& ts, int device, const char* op, int rank, bool same_shape) {
  GR_CHECK(!ts.empty(), "nccl ", op, " on rank ", rank, ": the tensor list is empty");
  check_tensor(ts[0], device, op, rank);
  for (size_t i = 1; i < ts.size(); ++i) {
    check_tensor(ts[i], ts[0].device().index, op, rank);
    GR_CHECK(!same_shape || (ts[i].sizes() == ts[0].sizes() && ts[i].scalar_type() == ts[0].scalar_type()), "nccl ", op,
             " on rank ", rank, ": tensor ", i, " is ", ts[i].scalar_type(), " ", ts[i].sizes(), " but tensor 0 is ",
             ts[0].scalar_type(), " ", ts[0].sizes(), " (all must match)");
  }
}

ncclDataType_t to_nccl(ScalarType t) {
  switch (t) {
    case kFloat32:
      return ncclFloat32;
    case kFloat64:
      return ncclFloat64;
    case kInt64:
      return ncclInt64;
    case kUInt8:
      return ncclUint8;
    case kBFloat16:
      return ncclBfloat16;
    case kFloat16:
      return ncclFloat16;
    default:
      GR_ERROR("nccl: dtype ", t, " is not supported (float32, float64, int64, uint8, bfloat16, float16 are)");
  }
}

ncclRedOp_t to_nccl(ReduceOp op, ScalarType t, const char* what, int rank) {
  switch (op) {
    case ReduceOp::Sum:
      return ncclSum;
    case ReduceOp::Product:
      return ncclProd;
    case ReduceOp::Min:
      return ncclMin;
    case ReduceOp::Max:
      return ncclMax;
    case ReduceOp::Avg:
      GR_CHECK(is_floating_point(t), "nccl ", what, " on rank ", rank, ": avg needs a floating point tensor, got ", t);
      return ncclAvg;
  }
  GR_ERROR("nccl ", what, ": unknown reduce op ", static_cast<int>(op));
}

std::string error_text(ncclResult_t result, const char* last_error, const char* stmt, const char* func, int device,
                       int rank) {
  std::string text = detail::str_cat("NCCL error ", static_cast<int>(result), ": ", ncclGetErrorString(result), " in `",
                                     stmt, "` (", func, ", device cuda:", device, ", rank ", rank, ")");
  if (last_error && *last_error) text += detail::str_cat(": ", last_error);
  return text;
}

void throw_error(ncclResult_t result, const char* last_error, const char* stmt, const char* func, const char* file,
                 int line, int device, int rank) {
  gr::detail::throw_error(file, line, error_text(result, last_error, stmt, func, device, rank));
}

}  // namespace gr::distributed::nccl
