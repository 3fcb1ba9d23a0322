// Grid-stride loop indices for the CUDA kernels, in 64 bits:
//   for (int64_t i = first_index(); i < n; i += grid_stride()) ...
// Included by .cu files only.
#pragma once

#include <cstdint>

namespace gr::cuda {

__device__ __forceinline__ int64_t first_index() { return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ __forceinline__ int64_t grid_stride() { return static_cast<int64_t>(blockDim.x) * gridDim.x; }

}  // namespace gr::cuda
