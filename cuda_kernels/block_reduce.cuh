// Warp and block reductions for the CUDA kernels: every thread gets the result, and the
// combination order depends only on blockDim (fixed per launch), so results are
// deterministic run to run. Blocks must be a whole number of warps (at most 1024 threads)
// and every thread of the block must call. Included by .cu files only.
#pragma once

#include <cstdint>
#include <type_traits>

namespace gr::cuda {

constexpr unsigned kFullWarp = 0xffffffffu;

// __shfl_xor_sync for the element types of the kernels (narrow types travel as int).
template <class T>
__device__ __forceinline__ T shfl_xor(T v, int lane_mask) {
  if constexpr (sizeof(T) < 4) return static_cast<T>(__shfl_xor_sync(kFullWarp, static_cast<int>(v), lane_mask));
  else if constexpr (std::is_same_v<T, int64_t>)
    return static_cast<int64_t>(__shfl_xor_sync(kFullWarp, static_cast<long long>(v), lane_mask));
  else return __shfl_xor_sync(kFullWarp, v, lane_mask);
}

// Two sums reduced together (batch-norm statistics, nll's loss and weight totals).
template <class T>
struct Pair {
  T a, b;
};
template <class T>
__device__ __forceinline__ Pair<T> shfl_xor(Pair<T> v, int lane_mask) {
  return {shfl_xor(v.a, lane_mask), shfl_xor(v.b, lane_mask)};
}
// A value and its index (max/min with the position of the extreme).
template <class T>
struct ValueIndex {
  T v;
  int64_t i;
};
template <class T>
__device__ __forceinline__ ValueIndex<T> shfl_xor(ValueIndex<T> x, int lane_mask) {
  return {shfl_xor(x.v, lane_mask), shfl_xor(x.i, lane_mask)};
}
struct PairSum {
  template <class T>
  __device__ Pair<T> operator()(Pair<T> x, Pair<T> y) const {
    return {x.a + y.a, x.b + y.b};
  }
};
struct Sum {
  template <class T>
  __device__ T operator()(T x, T y) const {
    return x + y;
  }
};
struct Max {  // NaN propagates, as the CPU's max
  template <class T>
  __device__ T operator()(T x, T y) const {
    return (x != x || x > y) ? x : y;
  }
};

// Butterfly over the warp. Lanes may differ where op(x, y) and op(y, x) differ in bits (a sum
// does not; -0 vs +0 in Max does); block_all_reduce publishes lane 0's value only.
template <class T, class Op>
__device__ __forceinline__ T warp_all_reduce(T v, Op op) {
#pragma unroll
  for (int m = 16; m > 0; m /= 2) v = op(v, shfl_xor(v, m));
  return v;
}

template <class T, class Op>
__device__ T block_all_reduce(T v, Op op) {
  // Raw storage: a __shared__ array of a class type may not have a constructor.
  __shared__ alignas(T) unsigned char storage[32 * sizeof(T)];
  T* partial = reinterpret_cast<T*>(storage);
  v = warp_all_reduce(v, op);
  const int lane = static_cast<int>(threadIdx.x % 32), warp = static_cast<int>(threadIdx.x / 32);
  const int warps = static_cast<int>(blockDim.x / 32);
  __syncthreads();  // the previous call's readers are done with `partial`
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  T r = partial[0];
  for (int w = 1; w < warps; ++w) r = op(r, partial[w]);  // same order in every thread
  return r;
}

}  // namespace gr::cuda
