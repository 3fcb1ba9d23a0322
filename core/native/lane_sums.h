// Row sums for the CPU normalisation kernels (batch_norm.cpp, layer_norm.cpp): double
// accumulators in fixed lanes, so results do not depend on threads and the compiler can
// vectorise without reassociating; AVX-512 paths for float32 where the build targets it.
// Included by CPU kernel files only.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace gr::native {

// Sum of f(i) for i in [0, n), in double over 8 independent lanes: the lanes let the
// compiler vectorise without reassociating, and the order is fixed.
template <class F>
inline double lane_sum(int64_t n, const F& f) {
  constexpr int kLanes = 8;
  double acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j) acc[j] += f(i + j);
  double s = 0;
  for (; i < n; ++i) s += f(i);
  for (int j = 0; j < kLanes; ++j) s += acc[j];
  return s;
}

// Two sums in one pass: (sum of f(i), sum of g(i)), lanes as in lane_sum.
template <class F, class G>
inline std::pair<double, double> lane_sum2(int64_t n, const F& f, const G& g) {
  constexpr int kLanes = 8;
  double a[kLanes] = {}, b[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j) {
      a[j] += f(i + j);
      b[j] += g(i + j);
    }
  double sa = 0, sb = 0;
  for (; i < n; ++i) sa += f(i), sb += g(i);
  for (int j = 0; j < kLanes; ++j) sa += a[j], sb += b[j];
  return {sa, sb};
}

#if defined(__AVX512F__)
// float32 planes with AVX-512: the same two sums, 16 floats per step widened to double
// (this loop is what training spends its batch-norm time in).
inline __m512d lo_pd(__m512 v) { return _mm512_cvtps_pd(_mm512_castps512_ps256(v)); }
inline __m512d hi_pd(__m512 v) { return _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1))); }

// (sum of x - k, sum of (x - k)^2)
inline std::pair<double, double> shifted_sums(const float* x, int64_t n, double k) {
  const __m512d kk = _mm512_set1_pd(k);
  __m512d s1 = _mm512_setzero_pd(), s2 = _mm512_setzero_pd(), t1 = s1, t2 = s2;
  for (int64_t i = 0; i < n; i += 16) {
    const int64_t left = n - i;
    const __mmask16 m = left >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << left) - 1);
    const __m512 v = _mm512_maskz_loadu_ps(m, x + i);
    const __m512d a = _mm512_maskz_sub_pd(static_cast<__mmask8>(m), lo_pd(v), kk);
    const __m512d b = _mm512_maskz_sub_pd(static_cast<__mmask8>(m >> 8), hi_pd(v), kk);
    s1 = _mm512_add_pd(s1, a);
    s2 = _mm512_fmadd_pd(a, a, s2);
    t1 = _mm512_add_pd(t1, b);
    t2 = _mm512_fmadd_pd(b, b, t2);
  }
  return {_mm512_reduce_add_pd(_mm512_add_pd(s1, t1)), _mm512_reduce_add_pd(_mm512_add_pd(s2, t2))};
}

// (sum of dy, sum of dy * (x - m))
inline std::pair<double, double> grad_sums(const float* dy, const float* x, int64_t n, double mean) {
  const __m512d mm = _mm512_set1_pd(mean);
  __m512d s1 = _mm512_setzero_pd(), s2 = _mm512_setzero_pd(), t1 = s1, t2 = s2;
  for (int64_t i = 0; i < n; i += 16) {
    const int64_t left = n - i;
    const __mmask16 m = left >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << left) - 1);
    const __m512 g = _mm512_maskz_loadu_ps(m, dy + i), v = _mm512_maskz_loadu_ps(m, x + i);
    const __m512d g0 = lo_pd(g), g1 = hi_pd(g);
    s1 = _mm512_add_pd(s1, g0);
    t1 = _mm512_add_pd(t1, g1);
    s2 = _mm512_fmadd_pd(g0, _mm512_sub_pd(lo_pd(v), mm), s2);  // masked-out lanes are 0 * (0 - m)
    t2 = _mm512_fmadd_pd(g1, _mm512_sub_pd(hi_pd(v), mm), t2);
  }
  return {_mm512_reduce_add_pd(_mm512_add_pd(s1, t1)), _mm512_reduce_add_pd(_mm512_add_pd(s2, t2))};
}
#endif

// (sum of x - k, sum of (x - k)^2) over one plane, in double.
template <class T>
std::pair<double, double> plane_shifted_sums(const T* x, int64_t n, double k) {
#if defined(__AVX512F__)
  if constexpr (std::is_same_v<T, float>) return shifted_sums(x, n, k);
#endif
  return lane_sum2(
      n, [x, k](int64_t i) { return static_cast<double>(x[i]) - k; },
      [x, k](int64_t i) {
        const double d = static_cast<double>(x[i]) - k;
        return d * d;
      });
}

// (sum of dy, sum of dy * (x - mean)) over one plane, in double.
template <class T>
std::pair<double, double> plane_grad_sums(const T* dy, const T* x, int64_t n, double mean) {
#if defined(__AVX512F__)
  if constexpr (std::is_same_v<T, float>) return grad_sums(dy, x, n, mean);
#endif
  return lane_sum2(
      n, [dy](int64_t i) { return static_cast<double>(dy[i]); },
      [x, dy, mean](int64_t i) { return static_cast<double>(dy[i]) * (static_cast<double>(x[i]) - mean); });
}

}  // namespace gr::native
