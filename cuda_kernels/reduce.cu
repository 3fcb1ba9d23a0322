// CUDA sum and max/min (with index) over R of a contiguous in[outer, R, inner] into
// out[outer, inner] (the sum_stub and max_stub contracts of core/native/reduce/reduce.h). Sums run
// the generic reduction of reduce.cuh (accumulating in acc_t, as on the CPU); max/min ties
// and NaN follow functors::ArgExtreme, shared with the CPU.
#include <type_traits>

#include "core/functors.h"
#include "core/native/reduce/reduce.h"
#include "cuda_kernels/reduce.cuh"

namespace gr::cuda {
namespace {

namespace ops = gr::reduce_ops;

void sum_cuda(const void* in, void* out, int64_t outer, int64_t R, int64_t inner, ScalarType in_t, ScalarType out_t) {
  dispatch_all(in_t, "sum", [&]<class In>() {
    using Out = ops::sum_out_t<In>;
    GR_CHECK(scalar_type_of<Out> == out_t, "sum: dtype ", in_t, " -> ", out_t, " is not supported on CUDA");
    launch_reduce_to<In, Out>(in, out, outer, R, inner, ops::Sum<ops::acc_t<In>>{});
  });
}

// ---- max / min with the index of the first extreme ----

// The winner of two candidates; a total order (functors::ArgExtreme), so the tree's shape
// does not change the result.
template <class V>
struct PickExtreme {
  functors::ArgExtreme<V> beats;
  __device__ ValueIndex<V> operator()(ValueIndex<V> x, ValueIndex<V> y) const { return beats(y.v, y.i, x.v, x.i) ? y : x; }
};

// Shapes as sum's: in [outer, R, inner] contiguous (R >= 1), values/indices [outer, inner].
// V is the compare type (float for bfloat16/float16).
template <class T>
__global__ void max_thread_per_output(const T* in, T* values, int64_t* indices, int64_t outer, int64_t R, int64_t inner,
                                      bool is_max) {
  using V = ops::value_t<T>;
  const functors::ArgExtreme<V> beats{is_max};
  const int64_t n = outer * inner;
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += step) {
    const T* p = in + (k / inner) * R * inner + k % inner;
    V best = static_cast<V>(p[0]);
    int64_t best_i = 0;
    for (int64_t r = 1; r < R; ++r) {
      const V v = static_cast<V>(p[r * inner]);
      if (beats(v, r, best, best_i)) best = v, best_i = r;
    }
    values[k] = p[best_i * inner];
    if (indices) indices[k] = best_i;
  }
}

template <class T>
__global__ void max_block_per_output(const T* in, T* values, int64_t* indices, int64_t outer, int64_t R, int64_t inner,
                                     bool is_max) {
  using V = ops::value_t<T>;
  const PickExtreme<V> pick{{is_max}};
  const int64_t n = outer * inner;
  for (int64_t k = blockIdx.x; k < n; k += gridDim.x) {  // uniform per block: no divergent barrier
    const T* p = in + (k / inner) * R * inner + k % inner;
    // Threads past R start from element 0, which never beats a later candidate's equal.
    ValueIndex<V> best{static_cast<V>(p[0]), 0};
    for (int64_t r = threadIdx.x; r < R; r += blockDim.x)
      best = pick(best, ValueIndex<V>{static_cast<V>(p[r * inner]), r});
    best = block_all_reduce(best, pick);
    if (threadIdx.x == 0) {
      values[k] = p[best.i * inner];
      if (indices) indices[k] = best.i;
    }
  }
}

void max_cuda(const void* in, void* values, int64_t* indices, int64_t outer, int64_t R, int64_t inner, ScalarType t,
              bool is_max) {
  const int64_t n = outer * inner;
  if (n == 0) return;
  GR_CHECK(R > 0, is_max ? "max" : "min", ": internal: a reduction over 0 elements");
  dispatch_all(t, is_max ? "max" : "min", [&]<class T>() {
    const T* x = static_cast<const T*>(in);
    T* v = static_cast<T*>(values);
    if (thread_per_output(n, R, inner))
      max_thread_per_output<<<grid_size(n, kReduceThreads), kReduceThreads, 0, current_stream()>>>(x, v, indices, outer, R,
                                                                                                 inner, is_max);
    else
      max_block_per_output<<<output_blocks(n), kReduceThreads, 0, current_stream()>>>(x, v, indices, outer, R, inner,
                                                                                    is_max);
    GR_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace

GR_REGISTER_KERNEL(native::sum_stub, kCUDA, &sum_cuda);
GR_REGISTER_KERNEL(native::max_stub, kCUDA, &max_cuda);

}  // namespace gr::cuda
