// Element-wise reductions c[i] = a[i] (op) b[i] over raw buffers of one dtype: how the CPU
// backends combine two ranks' data (Gloo's reduce callback, the shm backend's sums).
#pragma once

#include <cstddef>
#include <functional>

#include "core/dtype.h"
#include "distributed/backends/process_group.h"

namespace gr::distributed {

// c may be a or b. bfloat16 and float16 are combined in float and rounded once per call.
// Avg reduces as Sum (the ProcessGroup front divides; see Note [The collective front]).
using ReduceKernel = std::function<void(void* c, const void* a, const void* b, size_t n)>;
ReduceKernel reduce_kernel(ReduceOp op, ScalarType t, const char* backend);

}  // namespace gr::distributed
