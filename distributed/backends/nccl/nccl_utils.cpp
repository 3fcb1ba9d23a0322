// Dtype/op mapping and error text of the NCCL process group.
#include "distributed/backends/nccl/nccl_utils.h"

#include "core/error.h"

namespace gr::distributed::nccl {

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
