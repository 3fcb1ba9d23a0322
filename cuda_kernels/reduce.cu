// CUDA sum over R of a contiguous in[outer, R, inner] into out[outer, inner] (the sum_stub
// contract of core/native/reduce.h). Two simple kernels: a thread per output when there are
// many outputs or R is short, else a block per output with a shuffle + shared-memory tree.
// Accumulation uses acc_t (float sums in double), as on the CPU.
#include <algorithm>
#include <type_traits>

#include "core/native/reduce.h"
#include "cuda_kernels/cuda_check.h"
#include "cuda_kernels/runtime.h"

namespace gr::cuda {
namespace {

constexpr int kThreads = 256;  // a multiple of 32; the block tree assumes it

// Shapes: in [outer, R, inner] contiguous, out [outer, inner]; k = o * inner + j.
template <class In, class Out>
__global__ void sum_thread_per_output(const In* in, Out* out, int64_t outer, int64_t R, int64_t inner) {
  using Acc = acc_t<In>;
  const int64_t n = outer * inner;
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += step) {
    const int64_t o = k / inner, j = k % inner;
    const In* p = in + o * R * inner + j;  // consecutive threads read consecutive j: coalesced
    Acc acc = 0;
    for (int64_t r = 0; r < R; ++r) acc += static_cast<Acc>(p[r * inner]);
    out[k] = static_cast<Out>(acc);
  }
}

// The sum of every thread's v, valid in thread 0. All threads of the block must call it.
template <class Acc>
__device__ Acc block_sum(Acc v) {
  __shared__ Acc warp_sums[kThreads / 32];
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < kThreads / 32 ? warp_sums[lane] : Acc(0);
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  }
  __syncthreads();  // warp_sums may be reused by the caller's next call
  return v;
}

template <class In, class Out>
__global__ void sum_block_per_output(const In* in, Out* out, int64_t outer, int64_t R, int64_t inner) {
  using Acc = acc_t<In>;
  const int64_t n = outer * inner;
  for (int64_t k = blockIdx.x; k < n; k += gridDim.x) {  // uniform per block: no divergent barrier
    const int64_t o = k / inner, j = k % inner;
    const In* p = in + o * R * inner + j;
    Acc acc = 0;
    for (int64_t r = threadIdx.x; r < R; r += blockDim.x) acc += static_cast<Acc>(p[r * inner]);
    acc = block_sum(acc);
    if (threadIdx.x == 0) out[k] = static_cast<Out>(acc);
  }
}

template <class In, class Out>
void launch_sum(const In* in, Out* out, int64_t outer, int64_t R, int64_t inner, cudaStream_t stream) {
  const int64_t n = outer * inner;
  if (n == 0) return;
  // Many outputs (or short rows) keep every thread busy with one output each; few long
  // rows need a whole block on each.
  if (R <= 64 || (inner > 1 && n >= 8192)) {
    sum_thread_per_output<<<grid_size(n, kThreads), kThreads, 0, stream>>>(in, out, outer, R, inner);
  } else {
    const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(n, grid_size(n * kThreads, kThreads)));
    sum_block_per_output<<<blocks, kThreads, 0, stream>>>(in, out, outer, R, inner);
  }
  GR_CUDA_CHECK_LAUNCH();
}

void sum_cuda(const void* in, void* out, int64_t outer, int64_t R, int64_t inner, ScalarType in_t, ScalarType out_t) {
  auto run = [&]<class In, class Out>() {
    launch_sum(static_cast<const In*>(in), static_cast<Out*>(out), outer, R, inner, current_stream());
  };
  // The pairs sum() produces: floats keep their dtype, integers and bool sum to int64.
  if (in_t == kFloat32 && out_t == kFloat32) return run.template operator()<float, float>();
  if (in_t == kFloat64 && out_t == kFloat64) return run.template operator()<double, double>();
  if (in_t == kInt64 && out_t == kInt64) return run.template operator()<int64_t, int64_t>();
  if (in_t == kUInt8 && out_t == kInt64) return run.template operator()<uint8_t, int64_t>();
  if (in_t == kBool && out_t == kInt64) return run.template operator()<bool, int64_t>();
  GR_ERROR("sum: dtype ", in_t, " -> ", out_t, " is not supported on CUDA");
}

}  // namespace

GR_REGISTER_KERNEL(native::sum_stub, kCUDA, &sum_cuda);

}  // namespace gr::cuda
