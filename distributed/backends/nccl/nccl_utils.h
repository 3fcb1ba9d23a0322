// Pieces of the NCCL process group that need no device: dtype and reduce-op mapping, and
// the error text of a failed NCCL call (NCCL's own strings, the statement, file:line, device
// and rank). CPU tests exercise all of it.
#pragma once

#include <nccl.h>

#include <string>

#include "core/tensor.h"
#include "distributed/backends/process_group.h"

#if NCCL_VERSION_CODE < NCCL_VERSION(2, 14, 0)
#error "gradring's NCCL backend needs NCCL 2.14 or newer (ncclCommInitRankConfig, non-blocking communicators)"
#endif

namespace gr::distributed::nccl {

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
