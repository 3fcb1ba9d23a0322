// Batch-norm pieces and their CPU kernels: per-channel reductions run in parallel over
// channels (double accumulators in fixed lanes, so results do not depend on threads),
// element-wise passes in parallel over (N, C) planes as one fused multiply-add per element.
// The per-channel arithmetic is batch_norm.h's, shared with cuda_kernels/batch_norm.cu.
#include "core/native/norm/batch_norm.h"

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/factory.h"
#include "core/native/copy/copy.h"
#include "core/native/reduce/lane_sums.h"
#include "core/parallel.h"

namespace gr::native {

GR_DEFINE_DISPATCH(BatchNormStatsFn, batch_norm_stats_stub);
GR_DEFINE_DISPATCH(BatchNormElemtFn, batch_norm_elemt_stub);
GR_DEFINE_DISPATCH(BatchNormBackwardReduceFn, batch_norm_backward_reduce_stub);
GR_DEFINE_DISPATCH(BatchNormBackwardElemtFn, batch_norm_backward_elemt_stub);
GR_DEFINE_DISPATCH(BatchNormUpdateStatsFn, batch_norm_update_stats_stub);

namespace {

int64_t channel_grain(BatchNormShape s) { return std::max<int64_t>(1, kGrainSize / std::max<int64_t>(s.N * s.S, 1)); }
int64_t plane_grain(BatchNormShape s) { return std::max<int64_t>(1, kGrainSize / std::max<int64_t>(s.S, 1)); }

template <class T>
void stats_kernel(const T* in, T* mean, T* invstd, BatchNormShape s, double eps) {
  parallel_for(0, s.C, channel_grain(s), [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      const int64_t count = s.N * s.S;
      // One pass: sums of (x - k) and (x - k)^2 around a shift k taken from the data (the
      // channel's first value), which keeps the variance free of cancellation in double.
      const double k = count > 0 ? static_cast<double>(in[c * s.S]) : 0.0;
      double sum = 0, sq = 0;
      for (int64_t n = 0; n < s.N; ++n) {
        const T* x = in + (n * s.C + c) * s.S;
        auto [a, b] = plane_shifted_sums(x, s.S, k);
        sum += a;
        sq += b;
      }
      const BatchNormStats st = batch_norm_finish_stats(sum, sq, k, count, eps);
      mean[c] = static_cast<T>(st.mean);
      invstd[c] = static_cast<T>(st.invstd);
    }
  });
}

template <class T>
void elemt_kernel(const T* in, T* out, const T* weight, const T* bias, const T* mean, const T* invstd,
                  BatchNormShape s) {
  parallel_for(0, s.N * s.C, plane_grain(s), [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const auto [alpha, beta] = batch_norm_affine(weight, bias, mean, invstd, p % s.C);
      const T* x = in + p * s.S;
      T* y = out + p * s.S;
      for (int64_t i = 0; i < s.S; ++i) y[i] = x[i] * alpha + beta;
    }
  });
}

template <class T>
void backward_reduce_kernel(const T* grad_out, const T* in, const T* mean, const T* invstd, T* sum_dy, T* sum_dy_xmu,
                            T* grad_weight, T* grad_bias, BatchNormShape s) {
  parallel_for(0, s.C, channel_grain(s), [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      const double m = static_cast<double>(mean[c]);
      double dy_sum = 0, dy_xmu = 0;
      for (int64_t n = 0; n < s.N; ++n) {
        const T* x = in + (n * s.C + c) * s.S;
        const T* dy = grad_out + (n * s.C + c) * s.S;
        auto [a, b] = plane_grad_sums(dy, x, s.S, m);
        dy_sum += a;
        dy_xmu += b;
      }
      sum_dy[c] = static_cast<T>(dy_sum);
      sum_dy_xmu[c] = static_cast<T>(dy_xmu);
      if (grad_weight) grad_weight[c] = static_cast<T>(dy_xmu * static_cast<double>(invstd[c]));
      if (grad_bias) grad_bias[c] = static_cast<T>(dy_sum);
    }
  });
}

template <class T>
void backward_elemt_kernel(const T* grad_out, const T* in, const T* mean, const T* invstd, const T* weight,
                           const T* sum_dy, const T* sum_dy_xmu, T* grad_in, double count, BatchNormShape s) {
  parallel_for(0, s.N * s.C, plane_grain(s), [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const auto [ta, tb, td] = batch_norm_backward_coeffs(mean, invstd, weight, sum_dy, sum_dy_xmu, count, p % s.C);
      const T* x = in + p * s.S;
      const T* dy = grad_out + p * s.S;
      T* gi = grad_in + p * s.S;
      for (int64_t i = 0; i < s.S; ++i) gi[i] = dy[i] * ta + x[i] * tb + td;
    }
  });
}

template <class T>
void update_stats_kernel(T* running_mean, T* running_var, const T* mean, const T* invstd, int64_t C, double momentum,
                         double eps, double count) {
  const double unbias = batch_norm_unbias(count);
  for (int64_t c = 0; c < C; ++c) batch_norm_running_update(running_mean, running_var, mean, invstd, c, momentum, eps, unbias);
}

// Note [Small batch-norm planes]
// With planes of at most 16 values (the 4x4, 2x2 and 1x1 maps at the end of a CNN, any
// BatchNorm1d input [N, C]) the per-plane loops above spend their time on per-plane overhead
// (a fold's set-up and tail, the per-channel coefficients) instead of the values: ResNet-18's
// batch norms on 1x1 maps took 5x PyTorch's time (at 64 values both ways run alike). These kernels walk each image's [C, S]
// block as one contiguous row, with double accumulators (or coefficients) per (channel,
// position), vectorised across channels; a channel's sums are then folded over its S
// positions. The element-wise passes compute exactly what the per-plane ones do; the sums
// only change order. Channel blocks run in parallel, so results do not depend on threads.
constexpr int64_t kSmallPlane = 16;
bool small_planes(BatchNormShape s) { return s.N > 0 && s.S > 0 && s.S <= kSmallPlane; }

// fn(c0, c1, i0, count): channels [c0, c1), whose values sit at [i0, i0 + count) of every image's row.
template <class Fn>
void for_channel_blocks(BatchNormShape s, Fn fn) {
  parallel_for(0, s.C, channel_grain(s), [&](int64_t c0, int64_t c1) { fn(c0, c1, c0 * s.S, (c1 - c0) * s.S); });
}

template <class T>
void stats_small(const T* in, T* mean, T* invstd, BatchNormShape s, double eps) {
  const int64_t S = s.S, CS = s.C * S;
  for_channel_blocks(s, [&](int64_t c0, int64_t c1, int64_t i0, int64_t count) {
    std::vector<double> k(static_cast<size_t>(count)), sum(k.size(), 0.0), sq(k.size(), 0.0);
    for (int64_t i = 0; i < count; ++i) k[i] = static_cast<double>(in[i0 + i / S * S]);  // the channel's first value
    for (int64_t n = 0; n < s.N; ++n) {
      const T* x = in + n * CS + i0;
      for (int64_t i = 0; i < count; ++i) {
        const double d = static_cast<double>(x[i]) - k[i];
        sum[i] += d, sq[i] += d * d;
      }
    }
    for (int64_t c = c0; c < c1; ++c) {
      const int64_t j0 = (c - c0) * S;
      double a = 0, b = 0;
      for (int64_t j = j0; j < j0 + S; ++j) a += sum[j], b += sq[j];
      const BatchNormStats st = batch_norm_finish_stats(a, b, k[j0], s.N * S, eps);
      mean[c] = static_cast<T>(st.mean);
      invstd[c] = static_cast<T>(st.invstd);
    }
  });
}

template <class T>
void backward_reduce_small(const T* grad_out, const T* in, const T* mean, const T* invstd, T* sum_dy, T* sum_dy_xmu,
                           T* grad_weight, T* grad_bias, BatchNormShape s) {
  const int64_t S = s.S, CS = s.C * S;
  for_channel_blocks(s, [&](int64_t c0, int64_t c1, int64_t i0, int64_t count) {
    std::vector<double> m(static_cast<size_t>(count)), a(m.size(), 0.0), b(m.size(), 0.0);
    for (int64_t i = 0; i < count; ++i) m[i] = static_cast<double>(mean[c0 + i / S]);
    for (int64_t n = 0; n < s.N; ++n) {
      const T* x = in + n * CS + i0;
      const T* dy = grad_out + n * CS + i0;
      for (int64_t i = 0; i < count; ++i) {
        const double d = static_cast<double>(dy[i]);
        a[i] += d, b[i] += d * (static_cast<double>(x[i]) - m[i]);
      }
    }
    for (int64_t c = c0; c < c1; ++c) {
      const int64_t j0 = (c - c0) * S;
      double dy_sum = 0, dy_xmu = 0;
      for (int64_t j = j0; j < j0 + S; ++j) dy_sum += a[j], dy_xmu += b[j];
      sum_dy[c] = static_cast<T>(dy_sum);
      sum_dy_xmu[c] = static_cast<T>(dy_xmu);
      if (grad_weight) grad_weight[c] = static_cast<T>(dy_xmu * static_cast<double>(invstd[c]));
      if (grad_bias) grad_bias[c] = static_cast<T>(dy_sum);
    }
  });
}

// out = in * a + b (forward) or dy * a + x * b + d (backward) with coefficients per channel,
// expanded to each (channel, position) of a block.
template <class T, class Coeffs, class Apply>
void elemt_small(BatchNormShape s, Coeffs coeffs, Apply apply) {
  const int64_t S = s.S, CS = s.C * S;
  for_channel_blocks(s, [&](int64_t c0, int64_t, int64_t i0, int64_t count) {
    std::vector<T> a(static_cast<size_t>(count)), b(a.size()), d(a.size());
    for (int64_t i = 0; i < count; ++i) coeffs(c0 + i / S, a[i], b[i], d[i]);
    for (int64_t n = 0; n < s.N; ++n) apply(n * CS + i0, count, a.data(), b.data(), d.data());
  });
}

template <class T>
const T* opt(const void* p) {
  return static_cast<const T*>(p);
}

void stats_cpu(const void* in, void* mean, void* invstd, BatchNormShape s, double eps, ScalarType t) {
  dispatch_floating(t, "batch_norm_stats", [&]<class T>() {
    if (small_planes(s)) return stats_small(opt<T>(in), static_cast<T*>(mean), static_cast<T*>(invstd), s, eps);
    stats_kernel(opt<T>(in), static_cast<T*>(mean), static_cast<T*>(invstd), s, eps);
  });
}
void elemt_cpu(const void* in, void* out, const void* weight, const void* bias, const void* mean, const void* invstd,
               BatchNormShape s, ScalarType t) {
  dispatch_floating(t, "batch_norm_elemt", [&]<class T>() {
    if (small_planes(s)) {
      const T *w = opt<T>(weight), *b = opt<T>(bias), *m = opt<T>(mean), *is = opt<T>(invstd), *x = opt<T>(in);
      T* y = static_cast<T*>(out);
      return elemt_small<T>(
          s,
          [&](int64_t c, T& alpha, T& beta, T&) {
            const auto co = batch_norm_affine(w, b, m, is, c);
            alpha = co.alpha, beta = co.beta;
          },
          [&](int64_t at, int64_t count, const T* alpha, const T* beta, const T*) {
            for (int64_t i = 0; i < count; ++i) y[at + i] = x[at + i] * alpha[i] + beta[i];
          });
    }
    elemt_kernel(opt<T>(in), static_cast<T*>(out), opt<T>(weight), opt<T>(bias), opt<T>(mean), opt<T>(invstd), s);
  });
}
void backward_reduce_cpu(const void* grad_out, const void* in, const void* mean, const void* invstd, void* sum_dy,
                         void* sum_dy_xmu, void* grad_weight, void* grad_bias, BatchNormShape s, ScalarType t) {
  dispatch_floating(t, "batch_norm_backward_reduce", [&]<class T>() {
    if (small_planes(s))
      return backward_reduce_small(opt<T>(grad_out), opt<T>(in), opt<T>(mean), opt<T>(invstd), static_cast<T*>(sum_dy),
                                   static_cast<T*>(sum_dy_xmu), static_cast<T*>(grad_weight), static_cast<T*>(grad_bias), s);
    backward_reduce_kernel(opt<T>(grad_out), opt<T>(in), opt<T>(mean), opt<T>(invstd), static_cast<T*>(sum_dy),
                           static_cast<T*>(sum_dy_xmu), static_cast<T*>(grad_weight), static_cast<T*>(grad_bias), s);
  });
}
void backward_elemt_cpu(const void* grad_out, const void* in, const void* mean, const void* invstd, const void* weight,
                        const void* sum_dy, const void* sum_dy_xmu, void* grad_in, double count, BatchNormShape s,
                        ScalarType t) {
  dispatch_floating(t, "batch_norm_backward_elemt", [&]<class T>() {
    if (small_planes(s)) {
      const T *dy = opt<T>(grad_out), *x = opt<T>(in);
      T* gi = static_cast<T*>(grad_in);
      return elemt_small<T>(
          s,
          [&](int64_t c, T& a, T& b, T& d) {
            const auto co = batch_norm_backward_coeffs(opt<T>(mean), opt<T>(invstd), opt<T>(weight), opt<T>(sum_dy),
                                                       opt<T>(sum_dy_xmu), count, c);
            a = co.a, b = co.b, d = co.d;
          },
          [&](int64_t at, int64_t n, const T* a, const T* b, const T* d) {
            for (int64_t i = 0; i < n; ++i) gi[at + i] = dy[at + i] * a[i] + x[at + i] * b[i] + d[i];
          });
    }
    backward_elemt_kernel(opt<T>(grad_out), opt<T>(in), opt<T>(mean), opt<T>(invstd), opt<T>(weight), opt<T>(sum_dy),
                          opt<T>(sum_dy_xmu), static_cast<T*>(grad_in), count, s);
  });
}
void update_stats_cpu(void* running_mean, void* running_var, const void* mean, const void* invstd, int64_t C,
                      double momentum, double eps, double count, ScalarType t) {
  dispatch_floating(t, "batch_norm_update_stats", [&]<class T>() {
    update_stats_kernel(static_cast<T*>(running_mean), static_cast<T*>(running_var), opt<T>(mean), opt<T>(invstd), C,
                        momentum, eps, count);
  });
}

// Checks an optional per-channel tensor against the input and returns its data (or null).
const void* channel_data(const Tensor& t, const Tensor& input, int64_t C, const char* op, const char* name) {
  if (!t.defined()) return nullptr;
  GR_CHECK(t.dim() == 1 && t.size(0) == C, op, ": expected ", name, " of shape [", C, "] for input of shape ",
           input.sizes(), ", got ", t.sizes());
  GR_CHECK(t.scalar_type() == input.scalar_type(), op, ": expected ", name, " to have the input's dtype ",
           input.scalar_type(), ", got ", t.scalar_type());
  GR_CHECK(t.device() == input.device(), op, ": expected ", name, " on ", input.device().str(), ", got ",
           t.device().str());
  GR_CHECK(t.is_contiguous(), op, ": ", name, " must be contiguous");
  return t.data_ptr();
}

}  // namespace

GR_REGISTER_KERNEL(batch_norm_stats_stub, kCPU, &stats_cpu);
GR_REGISTER_KERNEL(batch_norm_elemt_stub, kCPU, &elemt_cpu);
GR_REGISTER_KERNEL(batch_norm_backward_reduce_stub, kCPU, &backward_reduce_cpu);
GR_REGISTER_KERNEL(batch_norm_backward_elemt_stub, kCPU, &backward_elemt_cpu);
GR_REGISTER_KERNEL(batch_norm_update_stats_stub, kCPU, &update_stats_cpu);

BatchNormShape batch_norm_shape(const Tensor& input, const char* op) {
  GR_CHECK(input.defined(), op, ": input is undefined");
  GR_CHECK(input.dim() >= 2, op, ": expected an input of shape [N, C, ...] (at least 2-D), got ", input.sizes());
  GR_CHECK(input.scalar_type() == kFloat32 || input.scalar_type() == kFloat64, op,
           ": expected a float32 or float64 input, got ", input.scalar_type());
  BatchNormShape s{input.size(0), input.size(1), 1};
  for (int64_t d = 2; d < input.dim(); ++d) s.S *= input.size(d);
  return s;
}

std::pair<Tensor, Tensor> batch_norm_stats(const Tensor& input, double eps) {
  BatchNormShape s = batch_norm_shape(input, "batch_norm_stats");
  Tensor in = contiguous(input);
  Tensor mean = empty({s.C}, input.options()), invstd = empty({s.C}, input.options());
  if (s.C > 0) batch_norm_stats_stub(input.device(), in.data_ptr(), mean.data_ptr(), invstd.data_ptr(), s, eps,
                                     input.scalar_type());
  return {mean, invstd};
}

Tensor batch_norm_elemt(const Tensor& input, const Tensor& weight, const Tensor& bias, const Tensor& mean,
                        const Tensor& invstd) {
  const char* op = "batch_norm_elemt";
  BatchNormShape s = batch_norm_shape(input, op);
  const void* w = channel_data(weight, input, s.C, op, "weight");
  const void* b = channel_data(bias, input, s.C, op, "bias");
  const void* m = channel_data(mean, input, s.C, op, "mean");
  const void* is = channel_data(invstd, input, s.C, op, "invstd");
  GR_CHECK(m && is, op, ": mean and invstd must be defined");
  Tensor in = contiguous(input);
  Tensor out = empty(input.sizes(), input.options());
  if (out.numel() > 0)
    batch_norm_elemt_stub(input.device(), in.data_ptr(), out.data_ptr(), w, b, m, is, s, input.scalar_type());
  return out;
}

BatchNormBackwardReduce batch_norm_backward_reduce(const Tensor& grad_out, const Tensor& input, const Tensor& mean,
                                                   const Tensor& invstd, bool weight_g, bool bias_g) {
  const char* op = "batch_norm_backward_reduce";
  BatchNormShape s = batch_norm_shape(input, op);
  GR_CHECK(grad_out.sizes() == input.sizes() && grad_out.scalar_type() == input.scalar_type(), op,
           ": grad_out ", grad_out.toString(), " ", grad_out.sizes(), " does not match input ", input.toString(), " ",
           input.sizes());
  const void* m = channel_data(mean, input, s.C, op, "mean");
  const void* is = channel_data(invstd, input, s.C, op, "invstd");
  GR_CHECK(m && is, op, ": mean and invstd must be defined");
  Tensor in = contiguous(input), go = contiguous(grad_out);
  BatchNormBackwardReduce r;
  r.sum_dy = empty({s.C}, input.options());
  r.sum_dy_xmu = empty({s.C}, input.options());
  if (weight_g) r.grad_weight = empty({s.C}, input.options());
  if (bias_g) r.grad_bias = empty({s.C}, input.options());
  if (s.C > 0)
    batch_norm_backward_reduce_stub(input.device(), go.data_ptr(), in.data_ptr(), m, is, r.sum_dy.data_ptr(),
                                    r.sum_dy_xmu.data_ptr(), weight_g ? r.grad_weight.data_ptr() : nullptr,
                                    bias_g ? r.grad_bias.data_ptr() : nullptr, s, input.scalar_type());
  return r;
}

Tensor batch_norm_backward_elemt(const Tensor& grad_out, const Tensor& input, const Tensor& mean, const Tensor& invstd,
                                 const Tensor& weight, const Tensor& sum_dy, const Tensor& sum_dy_xmu, int64_t count) {
  const char* op = "batch_norm_backward_elemt";
  BatchNormShape s = batch_norm_shape(input, op);
  GR_CHECK(grad_out.sizes() == input.sizes() && grad_out.scalar_type() == input.scalar_type(), op,
           ": grad_out ", grad_out.toString(), " ", grad_out.sizes(), " does not match input ", input.toString(), " ",
           input.sizes());
  GR_CHECK(count > 0, op, ": count must be positive, got ", count);
  const void* m = channel_data(mean, input, s.C, op, "mean");
  const void* is = channel_data(invstd, input, s.C, op, "invstd");
  const void* w = channel_data(weight, input, s.C, op, "weight");
  const void* sd = channel_data(sum_dy, input, s.C, op, "sum_dy");
  const void* sdx = channel_data(sum_dy_xmu, input, s.C, op, "sum_dy_xmu");
  GR_CHECK(m && is && sd && sdx, op, ": mean, invstd, sum_dy and sum_dy_xmu must be defined");
  Tensor in = contiguous(input), go = contiguous(grad_out);
  Tensor gi = empty(input.sizes(), input.options());
  if (gi.numel() > 0)
    batch_norm_backward_elemt_stub(input.device(), go.data_ptr(), in.data_ptr(), m, is, w, sd, sdx, gi.data_ptr(),
                                   static_cast<double>(count), s, input.scalar_type());
  return gi;
}

void batch_norm_update_stats(const Tensor& running_mean, const Tensor& running_var, const Tensor& mean,
                             const Tensor& invstd, double momentum, double eps, int64_t count) {
  const char* op = "batch_norm_update_stats";
  GR_CHECK(mean.defined() && mean.dim() == 1 && mean.is_contiguous(), op, ": expected a contiguous 1-D mean");
  const int64_t C = mean.size(0);
  void* rm = const_cast<void*>(channel_data(running_mean, mean, C, op, "running_mean"));
  void* rv = const_cast<void*>(channel_data(running_var, mean, C, op, "running_var"));
  channel_data(invstd, mean, C, op, "invstd");
  if (!rm && !rv) return;
  batch_norm_update_stats_stub(mean.device(), rm, rv, mean.data_ptr(), invstd.data_ptr(), C, momentum, eps,
                               static_cast<double>(count), mean.scalar_type());
  if (rm) running_mean.unsafe_impl()->storage.bump_version();
  if (rv) running_var.unsafe_impl()->storage.bump_version();
}

}  // namespace gr::native
