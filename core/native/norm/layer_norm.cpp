// layer_norm's CPU kernels: one task per row (statistics in one read pass with double lane
// sums, then one subtract-multiply pass that vectorises), and the backward's per-row input
// gradient plus column sums for grad_weight/grad_bias (parallel over column blocks, rows in
// order: results do not depend on the thread count). Per-row arithmetic: layer_norm.h.
#include "core/native/norm/layer_norm.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/factory.h"
#include "core/native/copy/copy.h"
#include "core/native/reduce/lane_sums.h"
#include "core/parallel.h"

namespace gr::native {

GR_DEFINE_DISPATCH(LayerNormFn, layer_norm_stub);
GR_DEFINE_DISPATCH(LayerNormBackwardFn, layer_norm_backward_stub);

namespace {

int64_t row_grain(int64_t N) { return std::max<int64_t>(1, kGrainSize / std::max<int64_t>(N, 1)); }

template <class T>
void forward_kernel(const T* x, const T* w, const T* b, T* y, T* mean, T* rstd, int64_t M, int64_t N, double eps) {
  parallel_for(0, M, row_grain(N), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const T* xr = x + r * N;
      T* yr = y + r * N;
      const double k = static_cast<double>(xr[0]);  // N > 0 here
      const auto [sum, sq] = plane_shifted_sums(xr, N, k);
      const BatchNormStats s = layer_norm_stats(sum, sq, k, N, eps);
      mean[r] = static_cast<T>(s.mean);
      rstd[r] = static_cast<T>(s.invstd);
      const LayerNormRow<T> row = layer_norm_row<T>(s, xr[0]);
      // Separate loops per affine case keep each one branch-free (vectorised).
      if (w && b) {
        for (int64_t j = 0; j < N; ++j) yr[j] = ((xr[j] - row.k) - row.dmean) * row.rstd * w[j] + b[j];
      } else {
        for (int64_t j = 0; j < N; ++j) yr[j] = layer_norm_value(xr[j], row, w, b, j);
      }
    }
  });
}

template <class T>
void backward_kernel(const T* dy, const T* x, const T* mean, const T* rstd, const T* w, T* dx, T* gw, T* gb,
                     int64_t M, int64_t N) {
  if (dx) {
    parallel_for(0, M, row_grain(N), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const T *dyr = dy + r * N, *xr = x + r * N;
        T* dxr = dx + r * N;
        const double m = static_cast<double>(mean[r]);
        std::pair<double, double> sums;
        if (w) {
          sums = lane_sum2(
              N, [dyr, w](int64_t j) { return static_cast<double>(dyr[j] * w[j]); },
              [dyr, xr, w, m](int64_t j) {
                return static_cast<double>(dyr[j] * w[j]) * (static_cast<double>(xr[j]) - m);
              });
        } else {
          sums = plane_grad_sums(dyr, xr, N, m);
        }
        const auto c = layer_norm_backward_row<T>(sums.first, sums.second, m, static_cast<double>(rstd[r]), N);
        if (w) {
          for (int64_t j = 0; j < N; ++j) dxr[j] = layer_norm_grad_value<T>(dyr[j] * w[j], xr[j], c);
        } else {
          for (int64_t j = 0; j < N; ++j) dxr[j] = layer_norm_grad_value<T>(dyr[j], xr[j], c);
        }
      }
    });
  }
  if (!gw && !gb) return;
  // Column sums over the rows, a block of columns per task.
  parallel_for(0, N, std::max<int64_t>(64, kGrainSize / std::max<int64_t>(M, 1)), [&](int64_t j0, int64_t j1) {
    const int64_t n = j1 - j0;
    std::vector<double> sw(static_cast<size_t>(n), 0.0), sb(static_cast<size_t>(n), 0.0);
    for (int64_t r = 0; r < M; ++r) {
      const T *dyr = dy + r * N + j0, *xr = x + r * N + j0;
      const double m = static_cast<double>(mean[r]), is = static_cast<double>(rstd[r]);
      for (int64_t j = 0; j < n; ++j) {
        sw[j] += static_cast<double>(dyr[j]) * ((static_cast<double>(xr[j]) - m) * is);
        sb[j] += static_cast<double>(dyr[j]);
      }
    }
    for (int64_t j = 0; j < n; ++j) {
      if (gw) gw[j0 + j] = static_cast<T>(sw[j]);
      if (gb) gb[j0 + j] = static_cast<T>(sb[j]);
    }
  });
}

template <class T>
const T* ptr(const void* p) {
  return static_cast<const T*>(p);
}

void layer_norm_cpu(const void* x, const void* w, const void* b, void* y, void* mean, void* rstd, int64_t M,
                    int64_t N, double eps, ScalarType t) {
  dispatch_floating(t, "layer_norm", [&]<class T>() {
    forward_kernel(ptr<T>(x), ptr<T>(w), ptr<T>(b), static_cast<T*>(y), static_cast<T*>(mean),
                   static_cast<T*>(rstd), M, N, eps);
  });
}

void layer_norm_backward_cpu(const void* dy, const void* x, const void* mean, const void* rstd, const void* w,
                             void* dx, void* gw, void* gb, int64_t M, int64_t N, ScalarType t) {
  dispatch_floating(t, "layer_norm_backward", [&]<class T>() {
    backward_kernel(ptr<T>(dy), ptr<T>(x), ptr<T>(mean), ptr<T>(rstd), ptr<T>(w), static_cast<T*>(dx),
                    static_cast<T*>(gw), static_cast<T*>(gb), M, N);
  });
}

// mean/rstd's shape: x's leading dims, then a 1 for each normalized dim.
std::vector<int64_t> stats_shape(const Tensor& x, int64_t normalized_dims) {
  std::vector<int64_t> s(x.sizes().begin(), x.sizes().end());
  for (int64_t d = x.dim() - normalized_dims; d < x.dim(); ++d) s[static_cast<size_t>(d)] = 1;
  return s;
}

const void* data_or_null(const Tensor& t) { return t.defined() ? t.data_ptr() : nullptr; }

}  // namespace

GR_REGISTER_KERNEL(layer_norm_stub, kCPU, &layer_norm_cpu);
GR_REGISTER_KERNEL(layer_norm_backward_stub, kCPU, &layer_norm_backward_cpu);

std::pair<int64_t, int64_t> layer_norm_sizes(const Tensor& x, IntArrayRef normalized_shape, const Tensor& weight,
                                             const Tensor& bias, const char* op) {
  GR_CHECK(x.defined(), op, ": undefined input");
  const auto nd = static_cast<int64_t>(normalized_shape.size());
  GR_CHECK(nd >= 1, op, ": expected normalized_shape to be at least 1-dimensional, i.e., containing at least "
                    "one element, but got normalized_shape = ", normalized_shape);
  bool matches = x.dim() >= nd;
  for (int64_t i = 0; matches && i < nd; ++i) matches = x.size(x.dim() - nd + i) == normalized_shape[static_cast<size_t>(i)];
  if (!matches) {
    std::string expected = "[*";
    for (int64_t s : normalized_shape) expected += ", " + std::to_string(s);
    GR_ERROR(op, ": given normalized_shape=", normalized_shape, ", expected input with shape ", expected,
             "], but got input of size ", x.sizes());
  }
  GR_CHECK(x.is_floating_point(), op, ": expected a floating point input, got ", x.scalar_type());
  for (const Tensor* p : {&weight, &bias}) {
    if (!p->defined()) continue;
    const char* name = p == &weight ? "weight" : "bias";
    GR_CHECK(p->sizes() == normalized_shape, op, ": expected ", name, " of shape ", normalized_shape,
             " (normalized_shape), but got ", name, " of shape ", p->sizes());
    GR_CHECK(p->scalar_type() == x.scalar_type() && p->device() == x.device(), op, ": expected ", name,
             " to be ", x.toString(), " like the input, got ", p->toString());
  }
  int64_t M = 1, N = 1;
  for (int64_t s : normalized_shape) N *= s;
  for (int64_t d = 0; d < x.dim() - nd; ++d) M *= x.size(d);
  return {M, N};
}

std::tuple<Tensor, Tensor, Tensor> layer_norm(const Tensor& x, IntArrayRef normalized_shape, const Tensor& weight,
                                              const Tensor& bias, double eps) {
  const auto [M, N] = layer_norm_sizes(x, normalized_shape, weight, bias);
  if (is_reduced_float(x.scalar_type())) {  // Note [Reduced float math]
    auto f32 = [](const Tensor& t) { return t.defined() ? to_dtype(t, kFloat32) : t; };
    auto [y, mean, rstd] = layer_norm(f32(x), normalized_shape, f32(weight), f32(bias), eps);
    return {to_dtype(y, x.scalar_type()), mean, rstd};
  }
  Tensor xc = contiguous(x), wc = weight.defined() ? contiguous(weight) : weight,
         bc = bias.defined() ? contiguous(bias) : bias;
  Tensor y = empty(x.sizes(), x.options());
  const auto shape = stats_shape(x, static_cast<int64_t>(normalized_shape.size()));
  if (N == 0) return {y, zeros(shape, x.options()), full(shape, 1.0 / std::sqrt(eps), x.options())};  // empty rows
  Tensor mean = empty(shape, x.options()), rstd = empty(shape, x.options());
  if (M > 0) {
    layer_norm_stub(x.device(), xc.data_ptr(), data_or_null(wc), data_or_null(bc), y.data_ptr(), mean.data_ptr(),
                    rstd.data_ptr(), M, N, eps, x.scalar_type());
  }
  return {y, mean, rstd};
}

std::tuple<Tensor, Tensor, Tensor> layer_norm_backward(const Tensor& dy, const Tensor& x, IntArrayRef normalized_shape,
                                                       const Tensor& mean, const Tensor& rstd, const Tensor& weight,
                                                       bool need_x, bool need_weight, bool need_bias) {
  const auto [M, N] = layer_norm_sizes(x, normalized_shape, weight, Tensor());
  const ScalarType t = x.scalar_type();
  if (is_reduced_float(t)) {  // Note [Reduced float math]: mean/rstd are float32 already
    auto f32 = [](const Tensor& v) { return v.defined() ? to_dtype(v, kFloat32) : v; };
    auto [dx, gw, gb] = layer_norm_backward(f32(dy), f32(x), normalized_shape, mean, rstd, f32(weight), need_x,
                                            need_weight, need_bias);
    return {dx.defined() ? to_dtype(dx, t) : dx, gw.defined() ? to_dtype(gw, t) : gw,
            gb.defined() ? to_dtype(gb, t) : gb};
  }
  Tensor dyc = contiguous(dy), xc = contiguous(x), wc = weight.defined() ? contiguous(weight) : weight;
  Tensor dx, gw, gb;
  if (need_x) dx = empty(x.sizes(), x.options());
  if (need_weight) gw = M > 0 ? empty(normalized_shape, x.options()) : zeros(normalized_shape, x.options());
  if (need_bias) gb = M > 0 ? empty(normalized_shape, x.options()) : zeros(normalized_shape, x.options());
  if (M > 0 && N > 0 && (need_x || need_weight || need_bias)) {
    layer_norm_backward_stub(x.device(), dyc.data_ptr(), xc.data_ptr(), contiguous(mean).data_ptr(),
                             contiguous(rstd).data_ptr(), data_or_null(wc), dx.defined() ? dx.data_ptr() : nullptr,
                             gw.defined() ? gw.data_ptr() : nullptr, gb.defined() ? gb.data_ptr() : nullptr, M, N, t);
  }
  return {dx, gw, gb};
}

}  // namespace gr::native
