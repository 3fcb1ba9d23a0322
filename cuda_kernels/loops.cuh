// gpu_map: the one generic CUDA element-wise kernel, the twin of cpu_map (core/native/elementwise/cpu_loops.h).
// It walks a StridedLoop (output first, broadcast inputs have stride 0) writing out =
// f(in...) with the functors of core/functors.h, so the CPU and CUDA paths run the same
// arithmetic. Dense passes (the output contiguous, every input contiguous or one broadcast
// value) move packs of elements with vector loads (Note [Vectorised element-wise passes]);
// the rest walk a grid-stride loop splitting each index with IntDividers
// (Note [Fast index division]). Included by .cu files only.
#pragma once

#include <cstdint>
#include <utility>

#include "core/native/elementwise/strided_loop.h"
#include "cuda_kernels/cuda_check.h"
#include "cuda_kernels/int_divider.h"
#include "cuda_kernels/runtime.h"

namespace gr::cuda {

constexpr int kMaxLoopDims = 16;  // after coalescing; real loops have a handful
constexpr int kLoopThreads = 256;

// A StridedLoop as a by-value kernel argument: shape innermost last, strides in elements.
// `narrow`: numel < 2^31, so indices split with the 32-bit dividers `div` (div[d] divides by
// shape[d]).
template <int K>
struct LoopArgs {
  int ndim = 0;
  bool narrow = false;
  int64_t numel = 0;
  int64_t shape[kMaxLoopDims] = {};
  int64_t strides[K][kMaxLoopDims] = {};
  IntDivider div[kMaxLoopDims] = {};
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
  a.narrow = fits_31_bits(L.numel) && L.numel > 0;
  for (int d = 0; d < a.ndim; ++d) {
    a.shape[d] = L.shape[d];
    if (a.narrow) a.div[d] = IntDivider(static_cast<uint32_t>(L.shape[d]));
  }
  for (int k = 0; k < K; ++k) {
    for (int d = 0; d < a.ndim; ++d) a.strides[k][d] = L.strides[k][d];
    a.data[k] = L.data[k];
  }
  return a;
}

// Note [Vectorised element-wise passes]
// A grid-stride loop moving one element per thread and iteration keeps one load per operand
// in flight per thread: 8 KiB per SM at full occupancy, a third of what HBM3e needs in flight
// to run at its bandwidth. Dense passes instead give each thread a pack of V consecutive
// elements (16 bytes of the widest operand, at most 4 elements) read and written with one
// aligned vector access per operand, all loads issued before the functor runs; a broadcast
// input (stride 0) is read once. The last numel % V elements take scalar accesses, and passes
// whose pointers are not aligned to their packs the strided kernel. The functor and its
// per-element results are the same.
template <class... Ts>
constexpr int pack_width() {
  size_t widest = 1;
  ((widest = sizeof(Ts) > widest ? sizeof(Ts) : widest), ...);
  return widest >= 8 ? 2 : 4;
}

template <class T, int V>
struct alignas(sizeof(T) * V) Pack {
  T v[V];
};

// Whether L is a dense pass (see the Note); `steps` gets each operand's stride (1 or 0).
inline bool dense_loop(const native::StridedLoop& L, int64_t* steps) {
  if (L.ndim() != 1 || L.strides[0][0] != 1) return false;
  steps[0] = 1;
  for (int k = 1; k < L.noperands; ++k) {
    const int64_t s = L.strides[k][0];
    if (s != 0 && s != 1) return false;
    steps[k] = s;
  }
  return true;
}
// Whether operand k's pointer allows packs of `bytes` (always for broadcast operands).
inline bool pack_aligned(const native::StridedLoop& L, const int64_t* steps, const size_t* bytes) {
  for (int k = 0; k < L.noperands; ++k)
    if (steps[k] != 0 && reinterpret_cast<uintptr_t>(L.data[k]) % bytes[k] != 0) return false;
  return true;
}

namespace detail {

// Element offsets of linear index i in each operand. Contiguous operands coalesce to one
// dim, which needs no division; a 0-d loop (one element) has all offsets 0. The outermost
// dim needs no division either: what is left of i is its index.
template <int K>
__device__ __forceinline__ void loop_offsets(const LoopArgs<K>& a, int64_t i, int64_t (&off)[K]) {
  if (a.ndim == 1) {
#pragma unroll
    for (int k = 0; k < K; ++k) off[k] = i * a.strides[k][0];
    return;
  }
#pragma unroll
  for (int k = 0; k < K; ++k) off[k] = 0;
  if (a.ndim == 0) return;
  if (a.narrow) {
    auto r = static_cast<uint32_t>(i);
    for (int d = a.ndim - 1; d >= 1; --d) {
      const DivMod dm = a.div[d].divmod(r);
      r = dm.div;
#pragma unroll
      for (int k = 0; k < K; ++k) off[k] += static_cast<int64_t>(dm.mod) * a.strides[k][d];
    }
#pragma unroll
    for (int k = 0; k < K; ++k) off[k] += static_cast<int64_t>(r) * a.strides[k][0];
    return;
  }
  for (int d = a.ndim - 1; d >= 1; --d) {
    const int64_t size = a.shape[d];
    const int64_t idx = i % size;
    i /= size;
#pragma unroll
    for (int k = 0; k < K; ++k) off[k] += idx * a.strides[k][d];
  }
#pragma unroll
  for (int k = 0; k < K; ++k) off[k] += i * a.strides[k][0];
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

// A dense pass's operands: data and stride (1, or 0 for a broadcast input).
template <int K>
struct DenseArgs {
  int64_t numel = 0;
  char* data[K] = {};
  int64_t step[K] = {};
};

template <class T, int V>
__device__ __forceinline__ Pack<T, V> load_pack(const char* base, int64_t step, int64_t i) {
  const T* p = reinterpret_cast<const T*>(base);
  if (step == 0) {
    Pack<T, V> r;
    const T x = p[0];
#pragma unroll
    for (int j = 0; j < V; ++j) r.v[j] = x;
    return r;
  }
  return *reinterpret_cast<const Pack<T, V>*>(p + i);
}

template <int V, class Out, class... In, class F, size_t... I>
__device__ __forceinline__ void apply_pack(const F& f, const DenseArgs<1 + sizeof...(In)>& a, int64_t i,
                                           std::index_sequence<I...>) {
  auto body = [&f](const Pack<In, V>&... p) {
    Pack<Out, V> o;
#pragma unroll
    for (int j = 0; j < V; ++j) o.v[j] = f(p.v[j]...);
    return o;
  };
  *reinterpret_cast<Pack<Out, V>*>(reinterpret_cast<Out*>(a.data[0]) + i) =
      body(load_pack<In, V>(a.data[I + 1], a.step[I + 1], i)...);
}

template <int V, class F, class Out, class... In>
__global__ void dense_kernel(DenseArgs<1 + sizeof...(In)> a, F f) {
  const auto seq = std::index_sequence_for<In...>{};
  const int64_t packs = a.numel / V;
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (int64_t p = first; p < packs; p += step) apply_pack<V, Out, In...>(f, a, p * V, seq);
  // The last numel % V elements.
  for (int64_t i = packs * V + first; i < a.numel; i += step) {
    int64_t off[1 + sizeof...(In)];
    for (int k = 0; k < 1 + static_cast<int>(sizeof...(In)); ++k) off[k] = i * a.step[k];
    reinterpret_cast<Out*>(a.data[0])[i] = apply<Out, In...>(f, a.data, off, seq);
  }
}

}  // namespace detail

// out = f(in...) over the loop (operand 0 has type Out, operand i+1 type In_i), on `stream`.
// `op` names the caller in errors.
template <class Out, class... In, class F>
void gpu_map(const native::StridedLoop& L, const F& f, cudaStream_t stream, const char* op) {
  constexpr int K = 1 + sizeof...(In);
  if (L.numel == 0) return;
  constexpr int V = pack_width<Out, In...>();
  const size_t bytes[K] = {sizeof(Out) * V, (sizeof(In) * V)...};
  int64_t steps[K];
  if (L.noperands == K && dense_loop(L, steps) && pack_aligned(L, steps, bytes)) {
    detail::DenseArgs<K> args;
    args.numel = L.numel;
    for (int k = 0; k < K; ++k) args.data[k] = L.data[k], args.step[k] = steps[k];
    detail::dense_kernel<V, F, Out, In...>
        <<<grid_size((L.numel + V - 1) / V, kLoopThreads), kLoopThreads, 0, stream>>>(args, f);
    GR_CUDA_CHECK_LAUNCH();
    return;
  }
  LoopArgs<K> args = make_loop_args<K>(L, op);
  detail::elementwise_kernel<F, Out, In...>
      <<<grid_size(L.numel, kLoopThreads), kLoopThreads, 0, stream>>>(args, f);
  GR_CUDA_CHECK_LAUNCH();
}

}  // namespace gr::cuda
