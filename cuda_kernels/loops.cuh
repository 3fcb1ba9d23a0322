// gpu_map: the one generic CUDA element-wise kernel, the twin of cpu_map (core/native/elementwise/cpu_loops.h).
// It walks a StridedLoop (output first, broadcast inputs have stride 0) with a grid-stride
// loop and 64-bit indices, writing out = f(in...) with the functors of core/functors.h, so the
// CPU and CUDA paths run the same arithmetic. Included by .cu files only.
#pragma once

#include <cstdint>
#include <utility>

#include "core/native/elementwise/strided_loop.h"
#include "cuda_kernels/cuda_check.h"
#include "cuda_kernels/runtime.h"

namespace gr::cuda {

constexpr int kMaxLoopDims = 16;  // after coalescing; real loops have a handful
constexpr int kLoopThreads = 256;

// A StridedLoop as a by-value kernel argument: shape innermost last, strides in elements.
template <int K>
struct LoopArgs {
  int ndim = 0;
  int64_t numel = 0;
  int64_t shape[kMaxLoopDims] = {};
  int64_t strides[K][kMaxLoopDims] = {};
  char* data[K] = {};
};

template <int K>
LoopArgs<K> make_loop_args(const native::StridedLoop& L, const char* op) {
  GR_CHECK(L.noperands == K, op, ": internal: a loop of ", L.noperands, " operands given to a ", K, "-operand kernel");
  GR_CHECK(L.ndim() <= kMaxLoopDims, op, ": the operands keep ", L.ndim(),
           " dimensions after coalescing; the CUDA element-wise loop supports at most ", kMaxLoopDims);
  LoopArgs<K> a;
  a.ndim = L.ndim();
  a.numel = L.numel;
  for (int d = 0; d < a.ndim; ++d) a.shape[d] = L.shape[d];
  for (int k = 0; k < K; ++k) {
    for (int d = 0; d < a.ndim; ++d) a.strides[k][d] = L.strides[k][d];
    a.data[k] = L.data[k];
  }
  return a;
}

namespace detail {

// Element offsets of linear index i in each operand. Contiguous operands coalesce to one
// dim, which needs no division; a 0-d loop (one element) has all offsets 0.
template <int K>
__device__ __forceinline__ void loop_offsets(const LoopArgs<K>& a, int64_t i, int64_t (&off)[K]) {
  if (a.ndim == 1) {
#pragma unroll
    for (int k = 0; k < K; ++k) off[k] = i * a.strides[k][0];
    return;
  }
#pragma unroll
  for (int k = 0; k < K; ++k) off[k] = 0;
  for (int d = a.ndim - 1; d >= 0; --d) {
    const int64_t size = a.shape[d];
    const int64_t idx = i % size;
    i /= size;
#pragma unroll
    for (int k = 0; k < K; ++k) off[k] += idx * a.strides[k][d];
  }
}

template <class Out, class... In, class F, size_t... I>
__device__ __forceinline__ Out apply(const F& f, char* const* data, const int64_t* off, std::index_sequence<I...>) {
  return f(reinterpret_cast<const In*>(data[I + 1])[off[I + 1]]...);
}

template <class F, class Out, class... In>
__global__ void elementwise_kernel(LoopArgs<1 + sizeof...(In)> a, F f) {
  constexpr int K = 1 + sizeof...(In);
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < a.numel; i += step) {
    int64_t off[K];
    loop_offsets(a, i, off);
    reinterpret_cast<Out*>(a.data[0])[off[0]] = apply<Out, In...>(f, a.data, off, std::index_sequence_for<In...>{});
  }
}

}  // namespace detail

// out = f(in...) over the loop (operand 0 has type Out, operand i+1 type In_i), on `stream`.
// `op` names the caller in errors.
template <class Out, class... In, class F>
void gpu_map(const native::StridedLoop& L, const F& f, cudaStream_t stream, const char* op) {
  constexpr int K = 1 + sizeof...(In);
  if (L.numel == 0) return;
  LoopArgs<K> args = make_loop_args<K>(L, op);
  detail::elementwise_kernel<F, Out, In...>
      <<<grid_size(L.numel, kLoopThreads), kLoopThreads, 0, stream>>>(args, f);
  GR_CUDA_CHECK_LAUNCH();
}

}  // namespace gr::cuda
