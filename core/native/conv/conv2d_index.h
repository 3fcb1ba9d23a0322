// Index arithmetic of a convolution along one spatial axis, shared by the CPU im2col/col2im
// (core/native/conv/im2col.cpp) and the CUDA ones (cuda_kernels/im2col.cu). Output position o
// and tap k read input position o * stride - pad + k * dilation (outside [0, size): padding).
#pragma once

#include <cstdint>

#include "core/macros.h"

namespace gr::native {

// The input position that output position o reads through tap k.
GR_HOST_DEVICE GR_INLINE int64_t conv_input_index(int64_t o, int64_t k, int64_t stride, int64_t pad, int64_t dilation) {
  return o * stride - pad + k * dilation;
}

// The output position that reads input position i through tap k, or -1 when none does
// (i + pad - k * dilation is negative, not a multiple of the stride, or past n_out).
GR_HOST_DEVICE GR_INLINE int64_t conv_output_index(int64_t i, int64_t k, int64_t stride, int64_t pad, int64_t dilation,
                                                   int64_t n_out) {
  const int64_t t = i + pad - k * dilation;
  if (t < 0 || t % stride != 0) return -1;
  const int64_t o = t / stride;
  return o < n_out ? o : -1;
}

// The output positions o in [lo, hi) of [0, n_out) whose input position o * stride + offset
// lies in [0, size) (offset = k * dilation - pad for tap k); lo == hi when there are none.
struct ConvValidRange {
  int64_t lo, hi;
};
GR_HOST_DEVICE GR_INLINE ConvValidRange conv_valid_range(int64_t offset, int64_t stride, int64_t size, int64_t n_out) {
  const int64_t lo = offset < 0 ? (-offset + stride - 1) / stride : 0;
  int64_t hi = size - 1 - offset >= 0 ? (size - 1 - offset) / stride + 1 : 0;
  hi = hi < n_out ? hi : n_out;
  return {lo < hi ? lo : hi, hi};
}

}  // namespace gr::native
