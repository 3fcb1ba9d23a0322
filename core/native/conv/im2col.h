// im2col / col2im for NCHW convolutions over a chunk of the minibatch, so one GEMM covers
// many images. cols is [cg * kH * kW, nb * H_out * W_out]: row (c, i, j) holds, for every
// image n and output position (ho, wo), input[n0 + n, c0 + c, ho*sh - ph + i*dh,
// wo*sw - pw + j*dw] (zero where that falls in the padding).
#pragma once

#include "core/native/conv/conv2d.h"

namespace gr::native {

// Fills cols from input (the whole [N, C_in, H, W] buffer); images [n0, n0 + nb), channels
// [c0, c0 + cg). Rows are filled in parallel.
template <class T>
void im2col(const Conv2dArgs& a, const T* input, int64_t n0, int64_t nb, int64_t c0, int64_t cg, T* cols);

// The adjoint: adds every cols entry into the input position it was read from. Planes
// (n, c) are independent, so they run in parallel.
template <class T>
void col2im_add(const Conv2dArgs& a, const T* cols, int64_t n0, int64_t nb, int64_t c0, int64_t cg, T* grad_input);

}  // namespace gr::native
