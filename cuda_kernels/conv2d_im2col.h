// The im2col path of CUDA conv2d (cuDNN's fallback, see conv2d.h) and the kernels it
// launches (im2col.cu). Column matrices hold, for a chunk of nb images, one row per
// (c, i, j) of all C_in channels and kH x kW taps and one column per output position l:
// cols[n * image_stride + r * row_stride + l], where row r = (c * kH + i) * kW + j reads
// input[n0 + n, c, conv_input_index(ho, i, ...), conv_input_index(wo, j, ...)] (0 in padding).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/native/conv/conv2d.h"

namespace gr::cuda {

// image_stride = rows * L, row_stride = L: per image [rows, L] (a batch of GEMMs, one per image).
// image_stride = L, row_stride = nb * L: one [rows, nb * L] matrix (one GEMM over the chunk).
struct ColsLayout {
  int64_t image_stride, row_stride;
};

template <class T>
void im2col_cuda(const native::Conv2dArgs& a, const T* x, int64_t n0, int64_t nb, ColsLayout layout, T* cols,
                 cudaStream_t stream);
// The adjoint, as a gather: gx[n0 + n] (all channels) = the sum of the cols entries read
// from each input position, taps in (i, j) order as the CPU's col2im_add. Overwrites gx.
template <class T>
void col2im_cuda(const native::Conv2dArgs& a, const T* cols, int64_t n0, int64_t nb, ColsLayout layout, T* gx,
                 cudaStream_t stream);
// dst [C, nb * L] from images [n0, n0 + nb) of src [N, C, L]: dst[c, n * L + l] = src[n0 + n, c, l].
template <class T>
void images_to_channel_major(const T* src, int64_t n0, int64_t nb, int64_t C, int64_t L, T* dst, cudaStream_t stream);
// y[n, c, l] += b[c] for y [N, C, L].
template <class T>
void add_channel_bias(T* y, const T* b, int64_t N, int64_t C, int64_t L, cudaStream_t stream);

// The conv2d_forward_stub / conv2d_backward_stub contracts on im2col + cuBLAS (N > 0 and
// H_out * W_out > 0; null outputs are not computed).
void conv2d_forward_im2col(const native::Conv2dArgs& a, ScalarType t, const void* x, const void* w, const void* b,
                           void* y);
void conv2d_backward_im2col(const native::Conv2dArgs& a, ScalarType t, const void* gy, const void* x, const void* w,
                            void* gx, void* gw, void* gb);

}  // namespace gr::cuda
