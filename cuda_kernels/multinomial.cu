// CUDA multinomial kernels (the stubs of core/native/random/multinomial.h): the CPU kernels'
// arithmetic on the same random numbers, so both devices pick the same categories.
//   with replacement: p [N, C] float64, u [N, S] float64, out [N, S] int64
//   without:          keys [N, C] float64, out [N, K] int64
#include <cmath>

#include "core/factory.h"
#include "core/native/copy/copy.h"
#include "core/native/random/multinomial.h"
#include "cuda_kernels/block_reduce.cuh"
#include "cuda_kernels/cuda_check.h"
#include "cuda_kernels/grid_stride.cuh"
#include "cuda_kernels/runtime.h"

namespace gr::cuda {
namespace {

constexpr int kThreads = 256;

// Running sums of each row, a thread per row adding in the CPU's order (bit-identical sums);
// last[r]: the row's last category with positive weight.
__global__ void row_cdf_kernel(const double* p, double* cdf, int64_t* last, int64_t N, int64_t C) {
  for (int64_t r = first_index(); r < N; r += grid_stride()) {
    double sum = 0;
    int64_t l = 0;
    for (int64_t c = 0; c < C; ++c) {
      const double w = p[r * C + c];
      sum += w;
      cdf[r * C + c] = sum;
      if (w > 0) l = c;
    }
    last[r] = l;
  }
}

__global__ void sample_cdf_kernel(const double* cdf, const int64_t* last, const double* u, int64_t* out, int64_t N,
                                  int64_t C, int64_t S) {
  for (int64_t i = first_index(); i < N * S; i += grid_stride()) {
    const int64_t r = i / S;
    const double* row = cdf + r * C;
    out[i] = native::cdf_search(row, C, u[i] * row[C - 1], last[r]);
  }
}

struct KeyFirst {  // the earlier of two keys in the order of native::key_before
  __device__ ValueIndex<double> operator()(ValueIndex<double> x, ValueIndex<double> y) const {
    return native::key_before(y.v, y.i, x.v, x.i) ? y : x;
  }
};

// A block per row picks the row's K largest keys one at a time; a picked key becomes -inf
// in `keys` (a scratch copy: real keys are >= -1, and K never exceeds the keys above -1).
__global__ void top_keys_kernel(double* keys, int64_t* out, int64_t C, int64_t K) {
  double* row = keys + static_cast<int64_t>(blockIdx.x) * C;
  for (int64_t k = 0; k < K; ++k) {
    ValueIndex<double> best{-INFINITY, INT64_MAX};
    for (int64_t c = threadIdx.x; c < C; c += blockDim.x) best = KeyFirst{}(best, ValueIndex<double>{row[c], c});
    best = block_all_reduce(best, KeyFirst{});
    if (threadIdx.x == 0) {
      out[static_cast<int64_t>(blockIdx.x) * K + k] = best.i;
      row[best.i] = -INFINITY;
    }
    __syncthreads();
  }
}

void with_replacement_cuda(const Tensor& p, const Tensor& u, const Tensor& out) {
  const int64_t N = p.size(0), C = p.size(1), S = u.size(1);
  Tensor cdf = empty({N, C}, p.options()), last = empty({N}, TensorOptions(kInt64).device(p.device()));
  row_cdf_kernel<<<grid_size(N, kThreads), kThreads, 0, current_stream()>>>(p.data_ptr<double>(), cdf.data_ptr<double>(),
                                                                             last.data_ptr<int64_t>(), N, C);
  GR_CUDA_CHECK_LAUNCH();
  sample_cdf_kernel<<<grid_size(N * S, kThreads), kThreads, 0, current_stream()>>>(
      cdf.data_ptr<double>(), last.data_ptr<int64_t>(), u.data_ptr<double>(), out.data_ptr<int64_t>(), N, C, S);
  GR_CUDA_CHECK_LAUNCH();
}

void top_keys_cuda(const Tensor& keys, const Tensor& out) {
  const int64_t N = keys.size(0), C = keys.size(1), K = out.size(1);
  if (N == 0) return;
  Tensor scratch = native::clone(keys);
  top_keys_kernel<<<static_cast<unsigned>(N), kThreads, 0, current_stream()>>>(scratch.data_ptr<double>(),
                                                                              out.data_ptr<int64_t>(), C, K);
  GR_CUDA_CHECK_LAUNCH();
}

}  // namespace

GR_REGISTER_KERNEL(native::multinomial_with_replacement_stub, kCUDA, &with_replacement_cuda);
GR_REGISTER_KERNEL(native::multinomial_top_keys_stub, kCUDA, &top_keys_cuda);

}  // namespace gr::cuda
