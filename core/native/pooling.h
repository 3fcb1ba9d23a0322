// 2-D pooling without autograd: max (with torch's per-plane flat indices), average and
// adaptive average, forward and backward. Inputs are [N, C, H, W] or [C, H, W].
#pragma once

#include <utility>

#include "core/dispatch.h"
#include "core/tensor.h"

namespace gr::native {

// The shape of a pooling pass over `planes` contiguous H x W input planes, each giving an
// oH x oW output plane. Window (oh, ow) starts at (oh * sH - pH, ow * sW - pW); its taps are
// kH x kW, dilation apart. Adaptive pooling uses only planes, H, W, oH, oW.
struct Pool2dGeometry {
  int64_t planes = 0, H = 0, W = 0, oH = 0, oW = 0;
  int64_t kH = 1, kW = 1, sH = 1, sW = 1, pH = 0, pW = 0, dH = 1, dW = 1;
};

// Checks the arguments like torch and returns the geometry for `input`. stride empty =
// kernel_size; each list holds one value (both dims) or two (H, W).
Pool2dGeometry pool2d_geometry(const char* op, const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                               IntArrayRef padding, IntArrayRef dilation, bool ceil_mode);
Pool2dGeometry adaptive_pool2d_geometry(const char* op, const Tensor& input, IntArrayRef output_size);
// torch's pooling_output_shape: floor or ceil division, with no window starting in the
// right/bottom padding.
int64_t pool_output_size(int64_t in, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation, bool ceil_mode);

// Kernels: in/out/grad buffers are contiguous [planes, H, W] and [planes, oH, oW] of dtype t;
// indices hold, per output element, the flat index h * W + w of the max in its plane.
using MaxPool2dFn = void (*)(const void* in, void* out, int64_t* indices, const Pool2dGeometry& g, ScalarType t);
GR_DECLARE_DISPATCH(MaxPool2dFn, max_pool2d_stub);
// grad_in (overwritten) = scatter-add of grad_out to the indices.
using MaxPool2dBackwardFn = void (*)(const void* grad_out, const int64_t* indices, void* grad_in,
                                     const Pool2dGeometry& g, ScalarType t);
GR_DECLARE_DISPATCH(MaxPool2dBackwardFn, max_pool2d_backward_stub);
using AvgPool2dFn = void (*)(const void* in, void* out, const Pool2dGeometry& g, bool count_include_pad, ScalarType t);
GR_DECLARE_DISPATCH(AvgPool2dFn, avg_pool2d_stub);
// grad_in is overwritten.
using AvgPool2dBackwardFn = void (*)(const void* grad_out, void* grad_in, const Pool2dGeometry& g,
                                     bool count_include_pad, ScalarType t);
GR_DECLARE_DISPATCH(AvgPool2dBackwardFn, avg_pool2d_backward_stub);
// Output (oh, ow) averages rows [oh*H/oH, ceil((oh+1)*H/oH)) and likewise for columns.
using AdaptiveAvgPool2dFn = void (*)(const void* in, void* out, const Pool2dGeometry& g, ScalarType t);
GR_DECLARE_DISPATCH(AdaptiveAvgPool2dFn, adaptive_avg_pool2d_stub);
using AdaptiveAvgPool2dBackwardFn = void (*)(const void* grad_out, void* grad_in, const Pool2dGeometry& g, ScalarType t);
GR_DECLARE_DISPATCH(AdaptiveAvgPool2dBackwardFn, adaptive_avg_pool2d_backward_stub);

// Returns (values, int64 indices).
std::pair<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, const Pool2dGeometry& g);
Tensor max_pool2d_backward(const Tensor& grad_out, const Tensor& indices, IntArrayRef input_sizes,
                           const Pool2dGeometry& g);
Tensor avg_pool2d(const Tensor& input, const Pool2dGeometry& g, bool count_include_pad);
Tensor avg_pool2d_backward(const Tensor& grad_out, IntArrayRef input_sizes, const Pool2dGeometry& g,
                           bool count_include_pad);
Tensor adaptive_avg_pool2d(const Tensor& input, const Pool2dGeometry& g);
Tensor adaptive_avg_pool2d_backward(const Tensor& grad_out, IntArrayRef input_sizes, const Pool2dGeometry& g);

}  // namespace gr::native
