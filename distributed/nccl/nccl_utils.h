// Pieces of the NCCL process group that need no device: tensor argument checks, dtype and
// reduce-op mapping, and the error text of a failed NCCL call (NCCL's own strings, the
// statement, file:line, device and rank). CPU tests exercise all of it.
#pragma once

#include <nccl.h>

#include <string>
#include <vector>

#include "core/tensor.h"
#include "distributed/process_group.h"

#if NCCL_VERSION_CODE < NCCL_VERSION(2, 14, 0)
#error "gradring's NCCL backend needs NCCL 2.14 or newer (ncclCommInitRankConfig, non-blocking communicators)"
#endif

namespace gr::distributed::nccl {

// Checks a tensor handed to a collective: defined, a CUDA tensor, on `device` (the group's
// device; -1 while the group has none yet), contiguous, of a dtype NCCL carries. `op` names
// the collective and `rank` the caller in the error.
void check_tensor(const Tensor& t, int device, const char* op, int rank);
// The same for a list: non-empty, every tensor checked, all on one device and (with
// `same_shape`) shaped and typed like the first.
void check_tensors(const std::vector<Tensor>& ts, int device, const char* op, int rank, bool same_shape);

ncclDataType_t to_nccl(ScalarType t);
// Avg maps to ncclAvg (the division happens inside NCCL, in the reduction's type); it needs
// a floating point dtype, as on the CPU backends.
ncclRedOp_t to_nccl(ReduceOp op, ScalarType t, const char* what, int rank);

// "NCCL error: unhandled system error (...) in `ncclAllReduce(...)` (allreduce, device
// cuda:0, rank 1): <ncclGetLastError>", thrown as gr::Error at file:line. `last_error` may be
// null or empty.
std::string error_text(ncclResult_t result, const char* last_error, const char* stmt, const char* func, int device,
                       int rank);
[[noreturn]] void throw_error(ncclResult_t result, const char* last_error, const char* stmt, const char* func,
                              const char* file, int line, int device, int rank);

}  // namespace gr::distributed::nccl
