// Layer normalisation without autograd: the rows of a contiguous [M, N] view (N = the product
// of normalized_shape) are normalised one row at a time, mean and rstd = 1 / sqrt(var + eps)
// kept per row for the backward. The per-row arithmetic below is shared by the CPU kernels
// (layer_norm.cpp) and the CUDA kernels (cuda_kernels/layer_norm.cu).
#pragma once

#include <tuple>

#include "core/dispatch.h"
#include "core/native/norm/batch_norm.h"
#include "core/tensor.h"

namespace gr::native {

// Kernels see x, y, dy, dx as contiguous [M, N]; mean and rstd [M]; weight, bias, grad_weight
// and grad_bias [N] (any of these four may be null). All of one floating dtype.
using LayerNormFn = void (*)(const void* x, const void* weight, const void* bias, void* y, void* mean, void* rstd,
                             int64_t M, int64_t N, double eps, ScalarType t);
GR_DECLARE_DISPATCH(LayerNormFn, layer_norm_stub);
// dx (when non-null) = rstd * (dy w - mean(dy w) - xhat * mean(dy w xhat)) per row, with
// xhat = (x - mean) * rstd; grad_weight = sum over rows of dy xhat, grad_bias = sum of dy.
using LayerNormBackwardFn = void (*)(const void* dy, const void* x, const void* mean, const void* rstd,
                                     const void* weight, void* dx, void* grad_weight, void* grad_bias, int64_t M,
                                     int64_t N, ScalarType t);
GR_DECLARE_DISPATCH(LayerNormBackwardFn, layer_norm_backward_stub);

// A row's statistics come from the sums of (x - k) and (x - k)^2 around k = the row's first
// value, in double (batch_norm_finish_stats: no cancellation in the variance).
// y = ((x - k) - (mean - k)) * rstd, then the affine weight and bias: x - k is exact for a
// row with a large common offset, and mean - k is small, so nothing cancels in float32 (as
// x * rstd - mean * rstd, or x - mean with mean rounded to float, would).
template <class T>
struct LayerNormRow {
  T k, dmean, rstd;  // k = x[0], dmean = mean - k
};
GR_HOST_DEVICE GR_INLINE BatchNormStats layer_norm_stats(double sum, double sq, double k, int64_t N, double eps) {
  return batch_norm_finish_stats(sum, sq, k, N, eps);
}
template <class T>
GR_HOST_DEVICE GR_INLINE LayerNormRow<T> layer_norm_row(BatchNormStats s, T k) {
  return {k, static_cast<T>(s.mean - static_cast<double>(k)), static_cast<T>(s.invstd)};
}
template <class T>
GR_HOST_DEVICE GR_INLINE T layer_norm_value(T x, LayerNormRow<T> r, const T* weight, const T* bias, int64_t j) {
  T y = ((x - r.k) - r.dmean) * r.rstd;
  if (weight) y = y * weight[j];
  if (bias) y = y + bias[j];
  return y;
}
// Backward per row: with a = sum(dy w) / N and c = sum(dy w (x - mean)) rstd^2 / N,
// dx = rstd * (dy w - a) - c rstd * (x - mean).
template <class T>
struct LayerNormBackwardRow {
  T rstd, b, d, mean;  // dx = (dy w) * rstd + (x - mean) * b + d
};
template <class T>
GR_HOST_DEVICE GR_INLINE LayerNormBackwardRow<T> layer_norm_backward_row(double sum_dyw, double sum_dyw_xmu,
                                                                        double mean, double rstd, int64_t N) {
  const double n = static_cast<double>(N);
  const double c = sum_dyw_xmu * rstd * rstd / n;
  return {static_cast<T>(rstd), static_cast<T>(-c * rstd), static_cast<T>(-sum_dyw / n * rstd), static_cast<T>(mean)};
}
template <class T>
GR_HOST_DEVICE GR_INLINE T layer_norm_grad_value(T dyw, T x, LayerNormBackwardRow<T> c) {
  return dyw * c.rstd + (x - c.mean) * c.b + c.d;
}

// Checks layer_norm's (or rms_norm's: `op`) arguments, naming the op, shapes and dtypes in
// errors, and returns (M, N).
std::pair<int64_t, int64_t> layer_norm_sizes(const Tensor& x, IntArrayRef normalized_shape, const Tensor& weight,
                                             const Tensor& bias, const char* op = "layer_norm");
// (y, mean, rstd); mean and rstd have x's leading dims followed by ones, as torch's
// native_layer_norm ([..., 1, 1] for a 2-D normalized_shape).
std::tuple<Tensor, Tensor, Tensor> layer_norm(const Tensor& x, IntArrayRef normalized_shape, const Tensor& weight,
                                              const Tensor& bias, double eps);
// (dx, grad_weight, grad_bias); each is computed only where asked for.
std::tuple<Tensor, Tensor, Tensor> layer_norm_backward(const Tensor& dy, const Tensor& x, IntArrayRef normalized_shape,
                                                       const Tensor& mean, const Tensor& rstd, const Tensor& weight,
                                                       bool need_x, bool need_weight, bool need_bias);

}  // namespace gr::native
