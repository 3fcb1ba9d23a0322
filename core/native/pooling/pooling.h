// 2-D pooling without autograd: max (with torch's per-plane flat indices), average and
// adaptive average, forward and backward. Inputs are [N, C, H, W] or [C, H, W].
#pragma once

#include <utility>

#include "core/dispatch.h"
#include "core/functors.h"
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

// ---- per-element arithmetic, shared by the CPU and CUDA kernels ----
// x / go point at one input / output plane; every function computes one element, so a
// kernel may run them in any order. The backward ones gather: input (h, w) sums what the
// outputs whose windows hold it give it, in (oh, ow) order, in T, which is exactly the
// CPU's scatter order and rounding, with no atomics.

// Outputs [lo, hi) along one dim whose window [o * stride - pad, o * stride - pad + extent)
// holds input i (extent = (kernel - 1) * dilation + 1). The divisions run in I: CUDA passes
// int32_t where the geometry fits (Note [Fast index division] in cuda_kernels/int_divider.h).
struct OutputRange {
  int64_t lo, hi;
};
template <class I = int64_t>
GR_HOST_DEVICE GR_INLINE OutputRange windows_holding(I i, I pad, I extent, I stride, I out) {
  const I first = i + pad - extent + 1;  // o * stride >= first
  const I lo = first <= 0 ? I(0) : (first + stride - 1) / stride;
  return {lo, math::max(lo, math::min(out, (i + pad) / stride + 1))};
}

// Max of output (oh, ow) and the flat index h * W + w of the first maximum (NaN wins), taps
// in (row, column) order starting from -inf at the first tap inside the input, as torch.
template <class T>
struct MaxAt {
  T value;
  int64_t index;
};
template <class T>
GR_HOST_DEVICE GR_INLINE MaxAt<T> max_pool2d_at(const T* x, const Pool2dGeometry& g, int64_t oh, int64_t ow) {
  int64_t h0 = oh * g.sH - g.pH, w0 = ow * g.sW - g.pW;
  const int64_t h1 = math::min(h0 + (g.kH - 1) * g.dH + 1, g.H), w1 = math::min(w0 + (g.kW - 1) * g.dW + 1, g.W);
  while (h0 < 0) h0 += g.dH;
  while (w0 < 0) w0 += g.dW;
  MaxAt<T> best{static_cast<T>(-INFINITY), h0 * g.W + w0};
  for (int64_t h = h0; h < h1; h += g.dH)
    for (int64_t w = w0; w < w1; w += g.dW) {
      const T v = x[h * g.W + w];
      if (v > best.value || v != v) best = {v, h * g.W + w};
    }
  return best;
}
// grad_in at (h, w): the sum of the grad_out elements whose index is h * W + w.
template <class T, class I = int64_t>
GR_HOST_DEVICE GR_INLINE T max_pool2d_backward_at(const T* go, const int64_t* idx, const Pool2dGeometry& g, int64_t h,
                                                  int64_t w) {
  const OutputRange rh = windows_holding<I>(I(h), I(g.pH), I((g.kH - 1) * g.dH + 1), I(g.sH), I(g.oH));
  const OutputRange rw = windows_holding<I>(I(w), I(g.pW), I((g.kW - 1) * g.dW + 1), I(g.sW), I(g.oW));
  const int64_t at = h * g.W + w;
  T s = T(0);
  for (int64_t oh = rh.lo; oh < rh.hi; ++oh)
    for (int64_t ow = rw.lo; ow < rw.hi; ++ow)
      if (idx[oh * g.oW + ow] == at) s += go[oh * g.oW + ow];
  return s;
}

// The clipped window of average-pool output (oh, ow) and its divisor, as torch computes them.
struct AvgWindow {
  int64_t h0, h1, w0, w1;
  int64_t divisor;
};
GR_HOST_DEVICE GR_INLINE AvgWindow avg_window(const Pool2dGeometry& g, int64_t oh, int64_t ow, bool count_include_pad) {
  int64_t h0 = oh * g.sH - g.pH, w0 = ow * g.sW - g.pW;
  int64_t h1 = math::min(h0 + g.kH, g.H + g.pH), w1 = math::min(w0 + g.kW, g.W + g.pW);
  const int64_t padded = (h1 - h0) * (w1 - w0);
  h0 = math::max<int64_t>(h0, 0);
  w0 = math::max<int64_t>(w0, 0);
  h1 = math::min(h1, g.H);
  w1 = math::min(w1, g.W);
  return {h0, h1, w0, w1, count_include_pad ? padded : (h1 - h0) * (w1 - w0)};
}
template <class T>
GR_HOST_DEVICE GR_INLINE T avg_pool2d_at(const T* x, const Pool2dGeometry& g, int64_t oh, int64_t ow,
                                         bool count_include_pad) {
  const AvgWindow win = avg_window(g, oh, ow, count_include_pad);
  if (win.h0 >= win.h1 || win.w0 >= win.w1) return T(0);
  acc_t<T> s = 0;
  for (int64_t h = win.h0; h < win.h1; ++h)
    for (int64_t w = win.w0; w < win.w1; ++w) s += x[h * g.W + w];
  return static_cast<T>(s / static_cast<acc_t<T>>(win.divisor));
}
template <class T>
GR_HOST_DEVICE GR_INLINE T avg_pool2d_backward_at(const T* go, const Pool2dGeometry& g, int64_t h, int64_t w,
                                                  bool count_include_pad) {
  const OutputRange rh = windows_holding(h, g.pH, g.kH, g.sH, g.oH), rw = windows_holding(w, g.pW, g.kW, g.sW, g.oW);
  T s = T(0);
  for (int64_t oh = rh.lo; oh < rh.hi; ++oh)
    for (int64_t ow = rw.lo; ow < rw.hi; ++ow) {
      const AvgWindow win = avg_window(g, oh, ow, count_include_pad);
      if (h < win.h0 || h >= win.h1 || w < win.w0 || w >= win.w1) continue;
      s += go[oh * g.oW + ow] / static_cast<T>(win.divisor);
    }
  return s;
}

// Adaptive pooling: output o of `out` along a dim of `in` covers [start, end).
GR_HOST_DEVICE GR_INLINE int64_t adaptive_start(int64_t o, int64_t in, int64_t out) { return (o * in) / out; }
GR_HOST_DEVICE GR_INLINE int64_t adaptive_end(int64_t o, int64_t in, int64_t out) { return ((o + 1) * in + out - 1) / out; }
template <class T>
GR_HOST_DEVICE GR_INLINE T adaptive_avg_pool2d_at(const T* x, const Pool2dGeometry& g, int64_t oh, int64_t ow) {
  const int64_t h0 = adaptive_start(oh, g.H, g.oH), h1 = adaptive_end(oh, g.H, g.oH);
  const int64_t w0 = adaptive_start(ow, g.W, g.oW), w1 = adaptive_end(ow, g.W, g.oW);
  acc_t<T> s = 0;
  for (int64_t h = h0; h < h1; ++h)
    for (int64_t w = w0; w < w1; ++w) s += x[h * g.W + w];
  return static_cast<T>(s / static_cast<acc_t<T>>((h1 - h0) * (w1 - w0)));
}
// Outputs [lo, hi) along one dim whose adaptive window holds input i.
GR_HOST_DEVICE GR_INLINE OutputRange adaptive_windows_holding(int64_t i, int64_t in, int64_t out) {
  return {(i * out) / in, math::min(out, ((i + 1) * out + in - 1) / in)};
}
template <class T>
GR_HOST_DEVICE GR_INLINE T adaptive_avg_pool2d_backward_at(const T* go, const Pool2dGeometry& g, int64_t h, int64_t w) {
  const OutputRange rh = adaptive_windows_holding(h, g.H, g.oH), rw = adaptive_windows_holding(w, g.W, g.oW);
  T s = T(0);
  for (int64_t oh = rh.lo; oh < rh.hi; ++oh) {
    const int64_t h0 = adaptive_start(oh, g.H, g.oH), h1 = adaptive_end(oh, g.H, g.oH);
    if (h < h0 || h >= h1) continue;
    for (int64_t ow = rw.lo; ow < rw.hi; ++ow) {
      const int64_t w0 = adaptive_start(ow, g.W, g.oW), w1 = adaptive_end(ow, g.W, g.oW);
      if (w < w0 || w >= w1) continue;
      s += go[oh * g.oW + ow] / static_cast<T>((h1 - h0) * (w1 - w0));
    }
  }
  return s;
}

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
