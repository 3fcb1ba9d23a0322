// CUDA median/nanmedian (core/native/reduce/median.h's stub): a block per output finds the value
// whose stable rank among its run is the lower median (NaN last), counting for each candidate
// the smaller and the earlier equal values (the CPU's order: the same value and index):
// O(R^2 / threads) per output, meant for the runs of a few thousand values medians usually see.
#include "core/native/reduce/median.h"
#include "cuda_kernels/reduce.cuh"

namespace gr::cuda {
namespace {

namespace ops = gr::reduce_ops;

struct MinIndex {
  __device__ int64_t operator()(int64_t a, int64_t b) const { return a < b ? a : b; }
};

// Shapes: in [outer, R, inner] contiguous (R >= 1), values/indices [outer, inner].
template <class T>
__global__ void median_kernel(const T* in, T* values, int64_t* indices, int64_t outer, int64_t R, int64_t inner,
                              bool ignore_nan) {
  using V = ops::value_t<T>;
  __shared__ int64_t winner;
  const int64_t n = outer * inner;
  for (int64_t k = blockIdx.x; k < n; k += gridDim.x) {  // uniform per block: no divergent barrier
    const T* p = in + (k / inner) * R * inner + k % inner;
    auto at = [&](int64_t r) { return static_cast<V>(p[r * inner]); };
    int64_t nans = 0, first_nan = R;
    for (int64_t r = threadIdx.x; r < R; r += blockDim.x)
      if (math::isnan(at(r))) ++nans, first_nan = first_nan < r ? first_nan : r;
    nans = block_all_reduce(nans, Sum{});
    first_nan = block_all_reduce(first_nan, MinIndex{});
    if (threadIdx.x == 0) winner = first_nan;
    __syncthreads();
    if (!(nans > 0 && (!ignore_nan || nans == R))) {
      const int64_t target = (R - nans - 1) / 2;
      for (int64_t i = threadIdx.x; i < R; i += blockDim.x) {
        const V v = at(i);
        if (math::isnan(v)) continue;
        int64_t rank = 0;
        for (int64_t j = 0; j < R; ++j) {
          const V w = at(j);
          rank += (w < v || (w == v && j < i)) ? 1 : 0;
        }
        if (rank == target) winner = i;  // exactly one candidate has each rank
      }
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      values[k] = p[winner * inner];
      indices[k] = winner;
    }
    __syncthreads();  // winner is rewritten by the next output
  }
}

void median_cuda(const void* in, void* values, int64_t* indices, int64_t outer, int64_t R, int64_t inner, ScalarType t,
                 bool ignore_nan) {
  const int64_t n = outer * inner;
  if (n == 0) return;
  dispatch_all(t, ignore_nan ? "nanmedian" : "median", [&]<class T>() {
    median_kernel<<<output_blocks(n), kReduceThreads, 0, current_stream()>>>(
        static_cast<const T*>(in), static_cast<T*>(values), indices, outer, R, inner, ignore_nan);
    GR_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace

GR_REGISTER_KERNEL(native::median_stub, kCUDA, &median_cuda);

}  // namespace gr::cuda
