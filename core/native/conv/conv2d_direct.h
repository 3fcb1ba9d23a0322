// Direct CPU convolution for convolutions with few taps per output (C_in / groups * kH * kW
// small, e.g. a network's first layer on 1-3 input channels), where im2col + GEMM is a GEMM
// with a tiny K and a column buffer kH * kW times the input. Output rows are computed in
// place from shifted input rows: forward, weight + bias gradients in one pass over
// grad_output, and the input gradient. Horizontal stride 1 only (rows are vector loads);
// any vertical stride, padding, dilation and groups. AVX-512 kernels for float32 where the
// build targets AVX-512; plain loops (auto-vectorised) for float64 and other builds.
#pragma once

#include "core/native/conv/conv2d.h"

namespace gr::native {

// Whether the direct kernels handle this convolution (horizontal stride 1).
bool direct_applicable(const Conv2dArgs& a);

// Whether this build has the vector kernels for T (float32 with AVX-512); without them the
// direct path still works (plain loops), but kAuto does not pick it.
template <class T>
bool direct_vectorized();

// y [N, C_out, H_out, W_out] from x, w and bias (may be null); contiguous buffers, N > 0.
template <class T>
void direct_forward(const Conv2dArgs& a, const T* x, const T* w, const T* bias, T* y);

// gx (= d/dx), gw (= d/dw) and gb (= d/dbias) from gy; any may be null (not wanted), but gb
// is computed in the weight-gradient pass, so only together with gw. x is read only for gw
// and w only for gx. N > 0 and H_out * W_out > 0.
template <class T>
void direct_backward(const Conv2dArgs& a, const T* gy, const T* x, const T* w, T* gx, T* gw, T* gb);

}  // namespace gr::native
