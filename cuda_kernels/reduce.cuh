// The generic CUDA reduction: any op of core/reduce_functors.h over a contiguous
// in[outer, R, inner], each output's accumulator handed to store(k, acc) (k = o * inner + j),
// the twin of core/native/reduce/reduce_cpu.cpp's loop. Two kernels: a thread per output when there
// are many outputs or R is short (consecutive threads read consecutive j: coalesced), else a
// block per output combining its threads' partials with a shuffle + shared-memory tree.
// Included by .cu files only.
#pragma once

#include <algorithm>

#include "core/reduce_functors.h"
#include "cuda_kernels/block_reduce.cuh"
#include "cuda_kernels/cuda_check.h"
#include "cuda_kernels/runtime.h"

namespace gr::reduce_ops {
// Welford partials cross lanes field by field (found by argument-dependent lookup).
template <class A>
__device__ __forceinline__ WelfordData<A> shfl_xor(WelfordData<A> v, int lane_mask) {
  return {cuda::shfl_xor(v.mean, lane_mask), cuda::shfl_xor(v.m2, lane_mask), cuda::shfl_xor(v.n, lane_mask)};
}
}  // namespace gr::reduce_ops

namespace gr::cuda {

constexpr int kReduceThreads = 256;  // a multiple of 32; the block tree assumes it

// An op's combine as the binary functor block_all_reduce takes.
template <class Op>
struct Combine {
  Op op;
  template <class Acc>
  __device__ Acc operator()(Acc a, Acc b) const {
    return op.combine(a, b);
  }
};

template <class In>
__device__ __forceinline__ reduce_ops::value_t<In> reduce_load(const In* p) {
  return static_cast<reduce_ops::value_t<In>>(*p);
}

// Shapes: in [outer, R, inner] contiguous; k = o * inner + j indexes the outputs.
template <class In, class Op, class Store>
__global__ void reduce_thread_per_output(const In* in, int64_t outer, int64_t R, int64_t inner, Op op, Store store) {
  const int64_t n = outer * inner;
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += step) {
    const In* p = in + (k / inner) * R * inner + k % inner;
    auto acc = op.identity();
    for (int64_t r = 0; r < R; ++r) acc = op.reduce(acc, reduce_load(p + r * inner));
    store(k, acc);
  }
}

template <class In, class Op, class Store>
__global__ void reduce_block_per_output(const In* in, int64_t outer, int64_t R, int64_t inner, Op op, Store store) {
  const int64_t n = outer * inner;
  for (int64_t k = blockIdx.x; k < n; k += gridDim.x) {  // uniform per block: no divergent barrier
    const In* p = in + (k / inner) * R * inner + k % inner;
    auto acc = op.identity();
    for (int64_t r = threadIdx.x; r < R; r += blockDim.x) acc = op.reduce(acc, reduce_load(p + r * inner));
    acc = block_all_reduce(acc, Combine<Op>{op});
    if (threadIdx.x == 0) store(k, acc);
  }
}

// Many outputs (or short rows) keep every thread busy with one output each; few long rows
// need a whole block on each.
inline bool thread_per_output(int64_t n, int64_t R, int64_t inner) { return R <= 64 || (inner > 1 && n >= 8192); }
// Blocks for a block-per-output kernel: one per output, capped at what fills the device.
inline unsigned output_blocks(int64_t n) {
  return static_cast<unsigned>(std::min<int64_t>(n, grid_size(n * kReduceThreads, kReduceThreads)));
}

template <class In, class Op, class Store>
void launch_reduce(const In* in, int64_t outer, int64_t R, int64_t inner, const Op& op, const Store& store) {
  const int64_t n = outer * inner;
  if (n == 0) return;
  if (thread_per_output(n, R, inner))
    reduce_thread_per_output<<<grid_size(n, kReduceThreads), kReduceThreads, 0, current_stream()>>>(in, outer, R, inner,
                                                                                                  op, store);
  else
    reduce_block_per_output<<<output_blocks(n), kReduceThreads, 0, current_stream()>>>(in, outer, R, inner, op, store);
  GR_CUDA_CHECK_LAUNCH();
}

// The common case: the op's projection converted to Out.
template <class In, class Out, class Op>
void launch_reduce_to(const void* in, void* out, int64_t outer, int64_t R, int64_t inner, const Op& op) {
  launch_reduce(static_cast<const In*>(in), outer, R, inner, op, reduce_ops::ProjectTo<Out, Op>{static_cast<Out*>(out), op});
}

}  // namespace gr::cuda
