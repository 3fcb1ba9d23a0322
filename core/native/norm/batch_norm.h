// Batch normalisation without autograd, split into the pieces SyncBatchNorm reuses: local
// statistics, the element-wise normalisation, the backward reductions and the backward
// element-wise pass (distributed training all-gathers / all-reduces between them).
#pragma once

#include <utility>

#include "core/dispatch.h"
#include "core/functors.h"
#include "core/tensor.h"

namespace gr::native {

// Kernels see the input as a contiguous [N, C, S] block (S = product of the dims after 1);
// per-channel tensors ([C]) are contiguous and have the input's dtype. Optional pointers
// (weight, bias, grad_weight, grad_bias) may be null.
struct BatchNormShape {
  int64_t N = 0, C = 0, S = 0;
};

// mean[c] and invstd[c] = 1 / sqrt(biased_var[c] + eps), accumulated in double (two passes).
// An empty channel gives mean 0, invstd 1 / sqrt(eps).
using BatchNormStatsFn = void (*)(const void* in, void* mean, void* invstd, BatchNormShape s, double eps, ScalarType t);
GR_DECLARE_DISPATCH(BatchNormStatsFn, batch_norm_stats_stub);
// out = (in - mean[c]) * invstd[c] * weight[c] + bias[c].
using BatchNormElemtFn = void (*)(const void* in, void* out, const void* weight, const void* bias, const void* mean,
                                  const void* invstd, BatchNormShape s, ScalarType t);
GR_DECLARE_DISPATCH(BatchNormElemtFn, batch_norm_elemt_stub);
// sum_dy[c] = sum dy, sum_dy_xmu[c] = sum dy * (x - mean[c]); grad_weight[c] =
// sum_dy_xmu[c] * invstd[c], grad_bias[c] = sum_dy[c].
using BatchNormBackwardReduceFn = void (*)(const void* grad_out, const void* in, const void* mean, const void* invstd,
                                           void* sum_dy, void* sum_dy_xmu, void* grad_weight, void* grad_bias,
                                           BatchNormShape s, ScalarType t);
GR_DECLARE_DISPATCH(BatchNormBackwardReduceFn, batch_norm_backward_reduce_stub);
// grad_in = (dy - sum_dy/count - (x - mean) * invstd^2 * sum_dy_xmu/count) * invstd * weight.
using BatchNormBackwardElemtFn = void (*)(const void* grad_out, const void* in, const void* mean, const void* invstd,
                                          const void* weight, const void* sum_dy, const void* sum_dy_xmu,
                                          void* grad_in, double count, BatchNormShape s, ScalarType t);
GR_DECLARE_DISPATCH(BatchNormBackwardElemtFn, batch_norm_backward_elemt_stub);
// running = (1 - momentum) * running + momentum * batch, for C channels; the batch
// variance is recovered from invstd and made unbiased with count / (count - 1).
using BatchNormUpdateStatsFn = void (*)(void* running_mean, void* running_var, const void* mean, const void* invstd,
                                        int64_t C, double momentum, double eps, double count, ScalarType t);
GR_DECLARE_DISPATCH(BatchNormUpdateStatsFn, batch_norm_update_stats_stub);

// The per-channel arithmetic of the kernels, shared by CPU and CUDA (double throughout).

// Mean and invstd from sums of (x - k) and (x - k)^2 over `count` values around a shift k
// taken from the data (a channel value), which keeps the variance free of cancellation.
struct BatchNormStats {
  double mean, invstd;
};
GR_HOST_DEVICE GR_INLINE BatchNormStats batch_norm_finish_stats(double sum, double sq, double k, int64_t count,
                                                                double eps) {
  const double shifted_mean = count > 0 ? sum / static_cast<double>(count) : 0.0;
  double dev = sq - shifted_mean * sum;  // sum of squared deviations from the mean
  if (!(dev >= 0.0)) dev = 0.0;
  const double var = count > 0 ? dev / static_cast<double>(count) : 0.0;
  return {k + shifted_mean, 1.0 / math::sqrt(var + eps)};
}
// batch_norm_elemt as out = in * alpha + beta per channel.
template <class T>
struct BatchNormAffine {
  T alpha, beta;
};
template <class T>
GR_HOST_DEVICE GR_INLINE BatchNormAffine<T> batch_norm_affine(const T* weight, const T* bias, const T* mean,
                                                              const T* invstd, int64_t c) {
  const double a = static_cast<double>(invstd[c]) * (weight ? static_cast<double>(weight[c]) : 1.0);
  const double b = (bias ? static_cast<double>(bias[c]) : 0.0) - static_cast<double>(mean[c]) * a;
  return {static_cast<T>(a), static_cast<T>(b)};
}
// batch_norm_backward_elemt as grad_in = dy * a + x * b + d per channel.
template <class T>
struct BatchNormBackwardCoeffs {
  T a, b, d;
};
template <class T>
GR_HOST_DEVICE GR_INLINE BatchNormBackwardCoeffs<T> batch_norm_backward_coeffs(const T* mean, const T* invstd,
                                                                               const T* weight, const T* sum_dy,
                                                                               const T* sum_dy_xmu, double count,
                                                                               int64_t c) {
  const double is = static_cast<double>(invstd[c]);
  const double a = is * (weight ? static_cast<double>(weight[c]) : 1.0);
  const double k = static_cast<double>(sum_dy_xmu[c]) * is * is / count;
  const double mean_dy = static_cast<double>(sum_dy[c]) / count;
  return {static_cast<T>(a), static_cast<T>(-k * a), static_cast<T>((static_cast<double>(mean[c]) * k - mean_dy) * a)};
}
// Running statistics of channel c (either pointer may be null); unbias = count / (count - 1).
template <class T>
GR_HOST_DEVICE GR_INLINE void batch_norm_running_update(T* running_mean, T* running_var, const T* mean,
                                                        const T* invstd, int64_t c, double momentum, double eps,
                                                        double unbias) {
  if (running_mean)
    running_mean[c] = static_cast<T>((1 - momentum) * static_cast<double>(running_mean[c]) +
                                     momentum * static_cast<double>(mean[c]));
  if (running_var) {
    const double is = static_cast<double>(invstd[c]);
    const double var = 1.0 / (is * is) - eps;
    running_var[c] = static_cast<T>((1 - momentum) * static_cast<double>(running_var[c]) + momentum * var * unbias);
  }
}
GR_HOST_DEVICE GR_INLINE double batch_norm_unbias(double count) { return count > 1 ? count / (count - 1) : 1.0; }

// [N, C, S] view sizes of an input [N, C, ...] (at least 2-D).
BatchNormShape batch_norm_shape(const Tensor& input, const char* op);

// Returns (mean, invstd), each [C].
std::pair<Tensor, Tensor> batch_norm_stats(const Tensor& input, double eps);
// weight and bias may be undefined (scale 1, shift 0).
Tensor batch_norm_elemt(const Tensor& input, const Tensor& weight, const Tensor& bias, const Tensor& mean,
                        const Tensor& invstd);

struct BatchNormBackwardReduce {
  Tensor sum_dy, sum_dy_xmu, grad_weight, grad_bias;  // grad_weight/grad_bias undefined unless asked for
};
BatchNormBackwardReduce batch_norm_backward_reduce(const Tensor& grad_out, const Tensor& input, const Tensor& mean,
                                                   const Tensor& invstd, bool weight_g, bool bias_g);
// `count` is the number of elements per channel the statistics were taken over (all ranks).
Tensor batch_norm_backward_elemt(const Tensor& grad_out, const Tensor& input, const Tensor& mean, const Tensor& invstd,
                                 const Tensor& weight, const Tensor& sum_dy, const Tensor& sum_dy_xmu, int64_t count);
// In place on running_mean / running_var (either may be undefined); bumps their versions.
void batch_norm_update_stats(const Tensor& running_mean, const Tensor& running_var, const Tensor& mean,
                             const Tensor& invstd, double momentum, double eps, int64_t count);

}  // namespace gr::native
