// CUDA sum and max/min (with index) over R of a contiguous in[outer, R, inner] into
// out[outer, inner] (the sum_stub and max_stub contracts of core/native/reduce.h). Two simple
// kernels each: a thread per output when there are many outputs or R is short, else a block
// per output with a shuffle + shared-memory tree. Sums accumulate in acc_t (float in double),
// as on the CPU; max/min ties and NaN follow functors::ArgExtreme, shared with the CPU.
#include <algorithm>
#include <type_traits>

#include "core/functors.h"
#include "core/native/reduce.h"
#include "cuda_kernels/block_reduce.cuh"
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

template <class In, class Out>
__global__ void sum_block_per_output(const In* in, Out* out, int64_t outer, int64_t R, int64_t inner) {
  using Acc = acc_t<In>;
  const int64_t n = outer * inner;
  for (int64_t k = blockIdx.x; k < n; k += gridDim.x) {  // uniform per block: no divergent barrier
    const int64_t o = k / inner, j = k % inner;
    const In* p = in + o * R * inner + j;
    Acc acc = 0;
    for (int64_t r = threadIdx.x; r < R; r += blockDim.x) acc += static_cast<Acc>(p[r * inner]);
    acc = block_all_reduce(acc, Sum{});
    if (threadIdx.x == 0) out[k] = static_cast<Out>(acc);
  }
}

// Many outputs (or short rows) keep every thread busy with one output each; few long rows
// need a whole block on each.
bool thread_per_output(int64_t n, int64_t R, int64_t inner) { return R <= 64 || (inner > 1 && n >= 8192); }
// Blocks for a block-per-output kernel: one per output, capped at what fills the device.
unsigned output_blocks(int64_t n) { return static_cast<unsigned>(std::min<int64_t>(n, grid_size(n * kThreads, kThreads))); }

template <class In, class Out>
void launch_sum(const In* in, Out* out, int64_t outer, int64_t R, int64_t inner, cudaStream_t stream) {
  const int64_t n = outer * inner;
  if (n == 0) return;
  if (thread_per_output(n, R, inner)) {
    sum_thread_per_output<<<grid_size(n, kThreads), kThreads, 0, stream>>>(in, out, outer, R, inner);
  } else {
    sum_block_per_output<<<output_blocks(n), kThreads, 0, stream>>>(in, out, outer, R, inner);
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

// ---- max / min with the index of the first extreme ----

// The winner of two candidates; a total order (functors::ArgExtreme), so the tree's shape
// does not change the result.
template <class T>
struct PickExtreme {
  functors::ArgExtreme<T> beats;
  __device__ ValueIndex<T> operator()(ValueIndex<T> x, ValueIndex<T> y) const { return beats(y.v, y.i, x.v, x.i) ? y : x; }
};

// Shapes as sum's: in [outer, R, inner] contiguous (R >= 1), values/indices [outer, inner].
template <class T>
__global__ void max_thread_per_output(const T* in, T* values, int64_t* indices, int64_t outer, int64_t R, int64_t inner,
                                      bool is_max) {
  const functors::ArgExtreme<T> beats{is_max};
  const int64_t n = outer * inner;
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += step) {
    const int64_t o = k / inner, j = k % inner;
    const T* p = in + o * R * inner + j;
    T best = p[0];
    int64_t best_i = 0;
    for (int64_t r = 1; r < R; ++r) {
      const T v = p[r * inner];
      if (beats(v, r, best, best_i)) best = v, best_i = r;
    }
    values[k] = best;
    if (indices) indices[k] = best_i;
  }
}

template <class T>
__global__ void max_block_per_output(const T* in, T* values, int64_t* indices, int64_t outer, int64_t R, int64_t inner,
                                     bool is_max) {
  const PickExtreme<T> pick{{is_max}};
  const int64_t n = outer * inner;
  for (int64_t k = blockIdx.x; k < n; k += gridDim.x) {  // uniform per block: no divergent barrier
    const int64_t o = k / inner, j = k % inner;
    const T* p = in + o * R * inner + j;
    // Threads past R start from element 0, which never beats a later candidate's equal.
    ValueIndex<T> best{p[0], 0};
    for (int64_t r = threadIdx.x; r < R; r += blockDim.x) best = pick(best, ValueIndex<T>{p[r * inner], r});
    best = block_all_reduce(best, pick);
    if (threadIdx.x == 0) {
      values[k] = best.v;
      if (indices) indices[k] = best.i;
    }
  }
}

void max_cuda(const void* in, void* values, int64_t* indices, int64_t outer, int64_t R, int64_t inner, ScalarType t,
              bool is_max) {
  const int64_t n = outer * inner;
  if (n == 0) return;
  GR_CHECK(R > 0, is_max ? "max" : "min", ": internal: a reduction over 0 elements");
  dispatch_arith(t, is_max ? "max" : "min", [&]<class T>() {
    const T* x = static_cast<const T*>(in);
    T* v = static_cast<T*>(values);
    if (thread_per_output(n, R, inner))
      max_thread_per_output<<<grid_size(n, kThreads), kThreads, 0, current_stream()>>>(x, v, indices, outer, R, inner,
                                                                                     is_max);
    else
      max_block_per_output<<<output_blocks(n), kThreads, 0, current_stream()>>>(x, v, indices, outer, R, inner, is_max);
    GR_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace

GR_REGISTER_KERNEL(native::sum_stub, kCUDA, &sum_cuda);
GR_REGISTER_KERNEL(native::max_stub, kCUDA, &max_cuda);

}  // namespace gr::cuda
