// CUDA kernels of the im2col conv2d path (see conv2d_im2col.h): im2col, col2im as a gather
// (each input element sums its taps itself: no atomics, deterministic), the chunk transpose
// [nb, C, L] -> [C, nb * L], and the bias add. Grid-stride loops over 64-bit indices; the
// index arithmetic is core/native/conv/conv2d_index.h, shared with the CPU im2col.
#include "core/native/conv/conv2d_index.h"
#include "cuda_kernels/conv2d_im2col.h"
#include "cuda_kernels/cuda_check.h"
#include "cuda_kernels/grid_stride.cuh"
#include "cuda_kernels/runtime.h"

namespace gr::cuda {
namespace {

using native::Conv2dArgs;
using native::conv_input_index;
using native::conv_output_index;

constexpr int kThreads = 256;

// Shapes: x [N, C_in, H, W]; cols as ColsLayout says, rows = C_in * kH * kW, L = H_out * W_out.
// One thread per cols entry, l fastest: consecutive threads write consecutive columns.
template <class T>
__global__ void im2col_kernel(Conv2dArgs a, const T* __restrict__ x, int64_t n0, int64_t nb, ColsLayout layout,
                              T* __restrict__ cols) {
  const int64_t L = a.H_out * a.W_out, KK = a.kH * a.kW, rows = a.C_in * KK, total = nb * rows * L;
  for (int64_t e = first_index(); e < total; e += grid_stride()) {
    const int64_t l = e % L, r = (e / L) % rows, n = e / (L * rows);
    const int64_t c = r / KK, i = (r % KK) / a.kW, j = r % a.kW;
    const int64_t h = conv_input_index(l / a.W_out, i, a.stride_h, a.pad_h, a.dil_h);
    const int64_t w = conv_input_index(l % a.W_out, j, a.stride_w, a.pad_w, a.dil_w);
    const bool inside = h >= 0 && h < a.H && w >= 0 && w < a.W;
    cols[n * layout.image_stride + r * layout.row_stride + l] =
        inside ? x[(((n0 + n) * a.C_in + c) * a.H + h) * a.W + w] : T(0);
  }
}

// Shapes: gx [N, C_in, H, W] (images [n0, n0 + nb) written); cols as in im2col_kernel.
// One thread per input element, w fastest.
template <class T>
__global__ void col2im_kernel(Conv2dArgs a, const T* __restrict__ cols, int64_t n0, int64_t nb, ColsLayout layout,
                              T* __restrict__ gx) {
  const int64_t HW = a.H * a.W, total = nb * a.C_in * HW;
  for (int64_t e = first_index(); e < total; e += grid_stride()) {
    const int64_t w = e % a.W, h = (e / a.W) % a.H, c = (e / HW) % a.C_in, n = e / (HW * a.C_in);
    const T* base = cols + n * layout.image_stride + c * a.kH * a.kW * layout.row_stride;
    T sum = 0;
    for (int64_t i = 0; i < a.kH; ++i) {
      const int64_t ho = conv_output_index(h, i, a.stride_h, a.pad_h, a.dil_h, a.H_out);
      if (ho < 0) continue;
      for (int64_t j = 0; j < a.kW; ++j) {
        const int64_t wo = conv_output_index(w, j, a.stride_w, a.pad_w, a.dil_w, a.W_out);
        if (wo >= 0) sum += base[(i * a.kW + j) * layout.row_stride + ho * a.W_out + wo];
      }
    }
    gx[n0 * a.C_in * HW + e] = sum;
  }
}

// Shapes: src [N, C, L], dst [C, nb * L]; one thread per dst entry, l fastest.
template <class T>
__global__ void images_to_channel_major_kernel(const T* __restrict__ src, int64_t n0, int64_t nb, int64_t C, int64_t L,
                                               T* __restrict__ dst) {
  const int64_t total = C * nb * L;
  for (int64_t e = first_index(); e < total; e += grid_stride()) {
    const int64_t l = e % L, n = (e / L) % nb, c = e / (L * nb);
    dst[e] = src[((n0 + n) * C + c) * L + l];
  }
}

// Shapes: y [N, C, L], b [C].
template <class T>
__global__ void add_channel_bias_kernel(T* __restrict__ y, const T* __restrict__ b, int64_t N, int64_t C, int64_t L) {
  const int64_t total = N * C * L;
  for (int64_t e = first_index(); e < total; e += grid_stride()) y[e] += b[(e / L) % C];
}

}  // namespace

template <class T>
void im2col_cuda(const Conv2dArgs& a, const T* x, int64_t n0, int64_t nb, ColsLayout layout, T* cols,
                 cudaStream_t stream) {
  const int64_t total = nb * a.C_in * a.kH * a.kW * a.H_out * a.W_out;
  if (total == 0) return;
  im2col_kernel<T><<<grid_size(total, kThreads), kThreads, 0, stream>>>(a, x, n0, nb, layout, cols);
  GR_CUDA_CHECK_LAUNCH();
}

template <class T>
void col2im_cuda(const Conv2dArgs& a, const T* cols, int64_t n0, int64_t nb, ColsLayout layout, T* gx,
                 cudaStream_t stream) {
  const int64_t total = nb * a.C_in * a.H * a.W;
  if (total == 0) return;
  col2im_kernel<T><<<grid_size(total, kThreads), kThreads, 0, stream>>>(a, cols, n0, nb, layout, gx);
  GR_CUDA_CHECK_LAUNCH();
}

template <class T>
void images_to_channel_major(const T* src, int64_t n0, int64_t nb, int64_t C, int64_t L, T* dst, cudaStream_t stream) {
  const int64_t total = C * nb * L;
  if (total == 0) return;
  images_to_channel_major_kernel<T><<<grid_size(total, kThreads), kThreads, 0, stream>>>(src, n0, nb, C, L, dst);
  GR_CUDA_CHECK_LAUNCH();
}

template <class T>
void add_channel_bias(T* y, const T* b, int64_t N, int64_t C, int64_t L, cudaStream_t stream) {
  const int64_t total = N * C * L;
  if (total == 0) return;
  add_channel_bias_kernel<T><<<grid_size(total, kThreads), kThreads, 0, stream>>>(y, b, N, C, L);
  GR_CUDA_CHECK_LAUNCH();
}

#define GR_IM2COL_INSTANTIATE(T)                                                                             \
  template void im2col_cuda<T>(const Conv2dArgs&, const T*, int64_t, int64_t, ColsLayout, T*, cudaStream_t); \
  template void col2im_cuda<T>(const Conv2dArgs&, const T*, int64_t, int64_t, ColsLayout, T*, cudaStream_t); \
  template void images_to_channel_major<T>(const T*, int64_t, int64_t, int64_t, int64_t, T*, cudaStream_t);  \
  template void add_channel_bias<T>(T*, const T*, int64_t, int64_t, int64_t, cudaStream_t);
GR_IM2COL_INSTANTIATE(float)
GR_IM2COL_INSTANTIATE(double)
#undef GR_IM2COL_INSTANTIATE

}  // namespace gr::cuda
