// softmax and log_softmax along a dim, and their backward formulas (no autograd).
#pragma once

#include "core/dispatch.h"
#include "core/functors.h"
#include "core/functors_fast_math.h"
#include "core/tensor.h"

namespace gr::native {

// Per-element arithmetic of the softmax kernels, shared by CPU and CUDA. A row has maximum m
// and s = sum of softmax_term(x, m) (in double); the backward sum is over softmax_grad_term.
// float's exp is math::fast_exp (See Note [Vectorisable exp and erf]): softmax_term is then a
// float widened to double, so a kernel may store it as T and reload it without changing a bit.
// double keeps the C library's exp.
template <class T>
GR_HOST_DEVICE GR_INLINE T softmax_exp(T v) {
  if constexpr (std::is_same_v<T, double>) return math::exp(v);
  else return static_cast<T>(math::fast_exp(static_cast<float>(v)));
}
template <class T>
GR_HOST_DEVICE GR_INLINE double softmax_term(T x, T m) { return static_cast<double>(softmax_exp<T>(x - m)); }
template <class T>
GR_HOST_DEVICE GR_INLINE T log_softmax_lse(double s, T m) { return static_cast<T>(math::log(s)) + m; }
// logsumexp of a row with maximum m and s = sum of softmax_term: an infinite m (every element
// -inf, or a +inf) is the result itself; a NaN m or s gives NaN.
template <class T>
GR_HOST_DEVICE GR_INLINE T logsumexp_value(double s, T m) {
  return math::fabs(static_cast<double>(m)) == static_cast<double>(INFINITY) ? m : log_softmax_lse(s, m);
}
template <class T>  // inv = 1 / s
GR_HOST_DEVICE GR_INLINE T softmax_value(T x, T m, double inv) { return static_cast<T>(softmax_term(x, m) * inv); }
template <class T>
GR_HOST_DEVICE GR_INLINE double softmax_grad_term(T g, T y, bool log) {
  return log ? static_cast<double>(g) : static_cast<double>(g) * y;
}
template <class T>
GR_HOST_DEVICE GR_INLINE T softmax_grad_value(T g, T y, double s, bool log) {
  return log ? g - static_cast<T>(static_cast<double>(softmax_exp(y)) * s) : y * (g - static_cast<T>(s));
}
// One whole row of R elements, `inner` apart, in one thread: the CPU kernel's loop and the
// CUDA kernel's for short rows.
template <class T>
GR_HOST_DEVICE GR_INLINE void softmax_row(const T* x, T* y, int64_t R, int64_t inner, bool log) {
  T m = x[0];
  for (int64_t r = 1; r < R; ++r) m = math::max(m, x[r * inner]);
  double s = 0;
  for (int64_t r = 0; r < R; ++r) s += softmax_term(x[r * inner], m);
  if (log) {
    const T lse = log_softmax_lse(s, m);
    for (int64_t r = 0; r < R; ++r) y[r * inner] = x[r * inner] - lse;
  } else {
    const double inv = 1.0 / s;
    for (int64_t r = 0; r < R; ++r) y[r * inner] = softmax_value(x[r * inner], m, inv);
  }
}
template <class T>
GR_HOST_DEVICE GR_INLINE void softmax_backward_row(const T* g, const T* y, T* gi, int64_t R, int64_t inner, bool log) {
  double s = 0;
  for (int64_t r = 0; r < R; ++r) s += softmax_grad_term(g[r * inner], y[r * inner], log);
  for (int64_t r = 0; r < R; ++r) gi[r * inner] = softmax_grad_value(g[r * inner], y[r * inner], s, log);
}

// in/out contiguous [outer, R, inner]; softmax over R. `log` selects log_softmax.
using SoftmaxFn = void (*)(const void* in, void* out, int64_t outer, int64_t R, int64_t inner, ScalarType t, bool log);
GR_DECLARE_DISPATCH(SoftmaxFn, softmax_stub);
// grad_in = log ? g - exp(y) * sum(g) : y * (g - sum(g * y)), sums over R.
using SoftmaxBackwardFn = void (*)(const void* grad, const void* out, void* grad_in, int64_t outer, int64_t R,
                                   int64_t inner, ScalarType t, bool log);
GR_DECLARE_DISPATCH(SoftmaxBackwardFn, softmax_backward_stub);

// out[o, j] = log(sum over R of exp(in[o, r, j])) for contiguous [outer, R, inner] (R > 0);
// logsumexp's fused kernel, where a device has one (log_softmax_lse of the row's statistics).
using LogsumexpFn = void (*)(const void* in, void* out, int64_t outer, int64_t R, int64_t inner, ScalarType t);
GR_DECLARE_DISPATCH(LogsumexpFn, logsumexp_stub);

Tensor softmax(const Tensor& x, int64_t dim, bool log);
Tensor softmax_backward(const Tensor& grad, const Tensor& out, int64_t dim, bool log);

}  // namespace gr::native
