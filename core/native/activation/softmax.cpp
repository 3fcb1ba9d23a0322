// softmax/log_softmax and logsumexp's kernel: max-subtracted, accumulated in double, one pass
// per row or column (the per-element arithmetic is in softmax.h, shared with
// cuda_kernels/softmax.cu).
#include "core/native/activation/softmax.h"

#include <cmath>
#include <type_traits>

#include "core/factory.h"
#include "core/native/copy/copy.h"
#include "core/native/reduce/lane_sums.h"
#include "core/parallel.h"
#include "core/reduce_functors.h"

namespace gr::native {

GR_DEFINE_DISPATCH(SoftmaxFn, softmax_stub);
GR_DEFINE_DISPATCH(SoftmaxBackwardFn, softmax_backward_stub);
GR_DEFINE_DISPATCH(LogsumexpFn, logsumexp_stub);

namespace {

// Note [Softmax rows on the CPU]
// A contiguous row (inner == 1) is folded in lanes (See Note [Lane folds]): the max with
// reduce_ops::Max, the sums in double. softmax stores each exp as it goes (exactly softmax_term, see
// softmax.h), so the last pass only scales: one exp per element, and every loop vectorises
// (this file is compiled with -fno-trapping-math: See Note [Vectorisable exp and erf]).
// Strided rows (inner > 1) run softmax_row, the CUDA kernel's thread per row. The lanes sum
// in another order than softmax_row and the CUDA block reduction: results agree to rounding.
template <class T>
T row_max(const T* x, int64_t R) {
  return fold_row(reduce_ops::Max<T>{}, x, R);
}
template <class F>
double row_sum(int64_t R, const F& f) {
  return lane_fold(reduce_ops::Sum<double>{}, R, f);
}

template <class T>
void softmax_contiguous_row(const T* __restrict x, T* __restrict y, int64_t R, bool log) {
  const T m = row_max(x, R);
  if (log) {
    const T lse = log_softmax_lse(row_sum(R, [=](int64_t i) { return softmax_term(x[i], m); }), m);
    for (int64_t i = 0; i < R; ++i) y[i] = x[i] - lse;
    return;
  }
  for (int64_t i = 0; i < R; ++i) y[i] = static_cast<T>(softmax_term(x[i], m));
  const double inv = 1.0 / row_sum(R, [=](int64_t i) { return static_cast<double>(y[i]); });
  for (int64_t i = 0; i < R; ++i) y[i] = static_cast<T>(static_cast<double>(y[i]) * inv);  // softmax_value
}

template <class T>
void softmax_backward_contiguous_row(const T* __restrict g, const T* __restrict y, T* __restrict gi, int64_t R,
                                     bool log) {
  const double s = log ? row_sum(R, [=](int64_t i) { return softmax_grad_term(g[i], y[i], true); })
                       : row_sum(R, [=](int64_t i) { return softmax_grad_term(g[i], y[i], false); });
  if (log) {
    for (int64_t i = 0; i < R; ++i) gi[i] = softmax_grad_value(g[i], y[i], s, true);
  } else {
    for (int64_t i = 0; i < R; ++i) gi[i] = softmax_grad_value(g[i], y[i], s, false);
  }
}

struct Layout {
  int64_t outer = 1, R = 1, inner = 1;
};

Layout layout_of(const Tensor& x, int64_t d) {
  Layout l;
  for (int64_t i = 0; i < x.dim(); ++i) {
    if (i < d) l.outer *= x.size(i);
    else if (i == d) l.R = x.size(i);
    else l.inner *= x.size(i);
  }
  return l;
}

template <class T>
void softmax_kernel(const T* in, T* out, int64_t outer, int64_t R, int64_t inner, bool log) {
  parallel_for(0, outer * inner, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(R, 1)), [&](int64_t b, int64_t e) {
    if (inner == 1) {
      for (int64_t k = b; k < e; ++k) softmax_contiguous_row(in + k * R, out + k * R, R, log);
      return;
    }
    for (int64_t k = b; k < e; ++k) {
      const int64_t base = (k / inner) * R * inner + k % inner;
      softmax_row(in + base, out + base, R, inner, log);
    }
  });
}

template <class T>
void softmax_backward_kernel(const T* grad, const T* out, T* gin, int64_t outer, int64_t R, int64_t inner, bool log) {
  parallel_for(0, outer * inner, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(R, 1)), [&](int64_t b, int64_t e) {
    if (inner == 1) {
      for (int64_t k = b; k < e; ++k) softmax_backward_contiguous_row(grad + k * R, out + k * R, gin + k * R, R, log);
      return;
    }
    for (int64_t k = b; k < e; ++k) {
      const int64_t base = (k / inner) * R * inner + k % inner;
      softmax_backward_row(grad + base, out + base, gin + base, R, inner, log);
    }
  });
}

// logsumexp of each row (logsumexp_value). `stride` is inner, or a constant 1 for contiguous rows.
template <class T, class Stride>
void logsumexp_rows(const T* in, T* out, int64_t outer, int64_t R, int64_t inner, Stride stride) {
  parallel_for(0, outer * inner, std::max<int64_t>(1, kGrainSize / R), [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) {
      const T* x = in + (k / inner) * R * inner + k % inner;
      const T m = lane_fold(reduce_ops::Max<T>{}, R, [=](int64_t r) { return x[r * stride]; });
      out[k] = logsumexp_value(row_sum(R, [=](int64_t r) { return softmax_term(x[r * stride], m); }), m);
    }
  });
}

void logsumexp_cpu(const void* in, void* out, int64_t outer, int64_t R, int64_t inner, ScalarType t) {
  dispatch_floating(t, "logsumexp", [&]<class T>() {
    const T* x = static_cast<const T*>(in);
    T* y = static_cast<T*>(out);
    if (inner == 1) logsumexp_rows(x, y, outer, R, inner, std::integral_constant<int64_t, 1>{});
    else logsumexp_rows(x, y, outer, R, inner, inner);
  });
}

void softmax_cpu(const void* in, void* out, int64_t outer, int64_t R, int64_t inner, ScalarType t, bool log) {
  dispatch_floating(t, "softmax", [&]<class T>() {
    softmax_kernel(static_cast<const T*>(in), static_cast<T*>(out), outer, R, inner, log);
  });
}
void softmax_backward_cpu(const void* g, const void* y, void* gi, int64_t outer, int64_t R, int64_t inner, ScalarType t,
                          bool log) {
  dispatch_floating(t, "softmax_backward", [&]<class T>() {
    softmax_backward_kernel(static_cast<const T*>(g), static_cast<const T*>(y), static_cast<T*>(gi), outer, R, inner, log);
  });
}

}  // namespace

GR_REGISTER_KERNEL(softmax_stub, kCPU, &softmax_cpu);
GR_REGISTER_KERNEL(softmax_backward_stub, kCPU, &softmax_backward_cpu);
GR_REGISTER_KERNEL(logsumexp_stub, kCPU, &logsumexp_cpu);

Tensor softmax(const Tensor& x, int64_t dim, bool log) {
  const char* op = log ? "log_softmax" : "softmax";
  GR_CHECK(x.is_floating_point(), op, ": expected a floating point tensor, got ", x.scalar_type());
  if (is_reduced_float(x.scalar_type()))  // Note [Reduced float math]
    return to_dtype(softmax(to_dtype(x, kFloat32), dim, log), x.scalar_type());
  int64_t d = wrap_dim(dim, x.dim(), op);
  Tensor in = contiguous(x);
  Tensor out = empty(x.sizes(), x.options());
  if (x.numel() == 0) return out;
  Layout l = layout_of(x, d);
  softmax_stub(x.device(), in.data_ptr(), out.data_ptr(), l.outer, l.R, l.inner, x.scalar_type(), log);
  return out;
}

Tensor softmax_backward(const Tensor& grad, const Tensor& out, int64_t dim, bool log) {
  if (is_reduced_float(out.scalar_type()))  // Note [Reduced float math]
    return to_dtype(softmax_backward(to_dtype(grad, kFloat32), to_dtype(out, kFloat32), dim, log), out.scalar_type());
  int64_t d = wrap_dim(dim, out.dim(), "softmax_backward");
  Tensor g = contiguous(grad), y = contiguous(out);
  Tensor gin = empty(out.sizes(), out.options());
  if (out.numel() == 0) return gin;
  Layout l = layout_of(out, d);
  softmax_backward_stub(out.device(), g.data_ptr(), y.data_ptr(), gin.data_ptr(), l.outer, l.R, l.inner,
                        out.scalar_type(), log);
  return gin;
}

}  // namespace gr::native
