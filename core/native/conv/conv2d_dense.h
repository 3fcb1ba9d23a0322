// CPU convolution on tiny feature maps as one dense matrix product per group over whole
// images (Note [Convolution as one dense product] in conv2d_dense.cpp): the input and output
// tensors are read and written in place as [N, C * H * W] matrices, against a matrix built
// from the weights. Any kernel size, stride, padding, dilation and groups; worth it where a
// map has fewer positions than the kernel has taps (3x3 kernels on 2x2 and 1x1 maps).
#pragma once

#include "core/native/conv/conv2d.h"

namespace gr::native {

// Elements of the dense matrix of one group (C_out / groups * H_out * W_out x C_in / groups * H * W).
int64_t dense_matrix_elements(const Conv2dArgs& a);

// y [N, C_out, H_out, W_out] from x, w and bias (may be null); contiguous buffers.
template <class T>
void dense_forward(const Conv2dArgs& a, const T* x, const T* w, const T* bias, T* y);

// gx (= d/dx) and gw (= d/dw) from gy; either may be null (not wanted). x is read only for
// gw and w only for gx.
template <class T>
void dense_backward(const Conv2dArgs& a, const T* gy, const T* x, const T* w, T* gx, T* gw);

}  // namespace gr::native
