// CUDA layer_norm forward and backward (the layer_norm_stub contracts of
// core/native/norm/layer_norm.h). Shapes: x, y, dy, dx [M, N] contiguous, a block per row with
// block reductions for the double sums; grad_weight/grad_bias [N] are column sums, 32
// columns per block (see layer_norm_param_grads). The per-row
// arithmetic is layer_norm.h's, shared with the CPU.
#include <algorithm>

#include "core/native/norm/layer_norm.h"
#include "cuda_kernels/block_reduce.cuh"
#include "cuda_kernels/cuda_check.h"
#include "cuda_kernels/runtime.h"

namespace gr::cuda {
namespace {

using namespace gr::native;

constexpr int kThreads = 256;  // a multiple of 32 (block_all_reduce)

template <class T>
__global__ void layer_norm_rows(int64_t M, int64_t N, double eps, const T* x, const T* w, const T* b, T* y, T* mean,
                                T* rstd) {
  for (int64_t r = blockIdx.x; r < M; r += gridDim.x) {  // uniform per block: no divergent barrier
    const T* xr = x + r * N;
    T* yr = y + r * N;
    const double k = static_cast<double>(xr[0]);
    Pair<double> s{0.0, 0.0};
    for (int64_t j = threadIdx.x; j < N; j += blockDim.x) {
      const double d = static_cast<double>(xr[j]) - k;
      s.a += d;
      s.b += d * d;
    }
    s = block_all_reduce(s, PairSum{});
    const BatchNormStats st = layer_norm_stats(s.a, s.b, k, N, eps);
    if (threadIdx.x == 0) {
      mean[r] = static_cast<T>(st.mean);
      rstd[r] = static_cast<T>(st.invstd);
    }
    const LayerNormRow<T> row = layer_norm_row<T>(st, xr[0]);
    for (int64_t j = threadIdx.x; j < N; j += blockDim.x) yr[j] = layer_norm_value(xr[j], row, w, b, j);
  }
}

template <class T>
__device__ __forceinline__ double dyw(const T* dy, const T* w, int64_t j) {
  return w ? static_cast<double>(dy[j] * w[j]) : static_cast<double>(dy[j]);
}

template <class T>
__global__ void layer_norm_backward_rows(int64_t M, int64_t N, const T* dy, const T* x, const T* mean, const T* rstd,
                                         const T* w, T* dx) {
  for (int64_t r = blockIdx.x; r < M; r += gridDim.x) {
    const T *dyr = dy + r * N, *xr = x + r * N;
    T* dxr = dx + r * N;
    const double m = static_cast<double>(mean[r]);
    Pair<double> s{0.0, 0.0};
    for (int64_t j = threadIdx.x; j < N; j += blockDim.x) {
      const double g = dyw(dyr, w, j);
      s.a += g;
      s.b += g * (static_cast<double>(xr[j]) - m);
    }
    s = block_all_reduce(s, PairSum{});
    const auto c = layer_norm_backward_row<T>(s.a, s.b, m, static_cast<double>(rstd[r]), N);
    for (int64_t j = threadIdx.x; j < N; j += blockDim.x)
      dxr[j] = layer_norm_grad_value<T>(w ? static_cast<T>(dyr[j] * w[j]) : dyr[j], xr[j], c);
  }
}

// A block takes 32 columns: threadIdx.x picks the column (coalesced across a warp),
// threadIdx.y one of kRowLanes interleaved row stripes; the lanes' double partial sums are
// then added in a fixed order through shared memory (deterministic).
constexpr int kRowLanes = 16;

template <class T>
__global__ void layer_norm_param_grads(int64_t M, int64_t N, const T* dy, const T* x, const T* mean, const T* rstd,
                                       T* gw, T* gb) {
  __shared__ double part_w[kRowLanes][32], part_b[kRowLanes][32];
  const int64_t j = static_cast<int64_t>(blockIdx.x) * 32 + threadIdx.x;
  double sw = 0, sb = 0;
  if (j < N) {
    for (int64_t r = threadIdx.y; r < M; r += kRowLanes) {
      const double g = static_cast<double>(dy[r * N + j]);
      sw += g * ((static_cast<double>(x[r * N + j]) - static_cast<double>(mean[r])) * static_cast<double>(rstd[r]));
      sb += g;
    }
  }
  part_w[threadIdx.y][threadIdx.x] = sw;
  part_b[threadIdx.y][threadIdx.x] = sb;
  __syncthreads();
  if (threadIdx.y == 0 && j < N) {
    for (int l = 1; l < kRowLanes; ++l) {
      sw += part_w[l][threadIdx.x];
      sb += part_b[l][threadIdx.x];
    }
    if (gw) gw[j] = static_cast<T>(sw);
    if (gb) gb[j] = static_cast<T>(sb);
  }
}

unsigned row_blocks(int64_t M) { return static_cast<unsigned>(std::min<int64_t>(M, 65535)); }

void layer_norm_cuda(const void* x, const void* w, const void* b, void* y, void* mean, void* rstd, int64_t M,
                     int64_t N, double eps, ScalarType t) {
  if (M == 0) return;
  dispatch_floating(t, "layer_norm", [&]<class T>() {
    layer_norm_rows<T><<<row_blocks(M), kThreads, 0, current_stream()>>>(
        M, N, eps, static_cast<const T*>(x), static_cast<const T*>(w), static_cast<const T*>(b), static_cast<T*>(y),
        static_cast<T*>(mean), static_cast<T*>(rstd));
  });
  GR_CUDA_CHECK_LAUNCH();
}

void layer_norm_backward_cuda(const void* dy, const void* x, const void* mean, const void* rstd, const void* w,
                              void* dx, void* gw, void* gb, int64_t M, int64_t N, ScalarType t) {
  if (M == 0 || N == 0) return;
  cudaStream_t stream = current_stream();
  dispatch_floating(t, "layer_norm_backward", [&]<class T>() {
    const auto *pdy = static_cast<const T*>(dy), *px = static_cast<const T*>(x), *pm = static_cast<const T*>(mean),
               *pr = static_cast<const T*>(rstd);
    if (dx) {
      layer_norm_backward_rows<T><<<row_blocks(M), kThreads, 0, stream>>>(M, N, pdy, px, pm, pr,
                                                                           static_cast<const T*>(w), static_cast<T*>(dx));
      GR_CUDA_CHECK_LAUNCH();
    }
    if (gw || gb) {
      const auto blocks = static_cast<unsigned>((N + 31) / 32);
      layer_norm_param_grads<T><<<blocks, dim3(32, kRowLanes), 0, stream>>>(M, N, pdy, px, pm, pr, static_cast<T*>(gw),
                                                                            static_cast<T*>(gb));
      GR_CUDA_CHECK_LAUNCH();
    }
  });
}

}  // namespace

GR_REGISTER_KERNEL(native::layer_norm_stub, kCUDA, &layer_norm_cuda);
GR_REGISTER_KERNEL(native::layer_norm_backward_stub, kCUDA, &layer_norm_backward_cuda);

}  // namespace gr::cuda
