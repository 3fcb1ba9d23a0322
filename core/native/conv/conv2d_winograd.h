// Winograd F(2x2, 3x3) CPU convolution for 3x3 kernels with stride 1 and dilation 1 (any
// padding, any groups): 16 GEMMs over 4x4 transformed tiles replace the 9-tap products,
// about half the multiply-adds of im2col + GEMM. Forward, and the input and weight
// gradients through the transforms' adjoints, on the same 2x2 output tiling.
#pragma once

#include "core/native/conv/conv2d.h"

namespace gr::native {

// Whether the Winograd kernels handle this convolution (3x3, stride 1, dilation 1).
bool winograd_applicable(const Conv2dArgs& a);

// y [N, C_out, H_out, W_out] from x, w and bias (may be null); contiguous buffers.
template <class T>
void winograd_forward(const Conv2dArgs& a, const T* x, const T* w, const T* bias, T* y);

// gx (= d/dx) and gw (= d/dw) from gy; either may be null (not wanted). x is read only for
// gw and w only for gx.
template <class T>
void winograd_backward(const Conv2dArgs& a, const T* gy, const T* x, const T* w, T* gx, T* gw);

}  // namespace gr::native
