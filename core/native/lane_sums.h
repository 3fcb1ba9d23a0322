// Row folds for the CPU kernels (reductions, softmax, batch_norm, layer_norm): accumulators
// in fixed lanes, so results do not depend on threads and the compiler can vectorise without
// reassociating; GCC vector types for the float rows of sum/amax/amin, AVX-512 paths for
// float32 batch/layer norm where the build targets it.
// Included by CPU kernel files only.
#pragma once

#include <string.h>

#include <cstdint>
#include <type_traits>
#include <utility>

#include "core/reduce_functors.h"

#if defined(__AVX__)
#include <immintrin.h>
#endif

namespace gr::native {

// Note [Lane folds]
// The fold of f(i) for i in [0, n) with a reduce_ops op (core/reduce_functors.h) in L
// independent lanes (lane k takes i = k mod L), merged by a fixed tree: the order depends on
// n only, and the lanes let the compiler vectorise without reassociating. 128 bytes of lanes
// (4 AVX2 registers: 16 double or 32 float) hide an add's latency without spilling; 256 and
// 512 bytes (the reductions' old 32 and 64 lanes) measured slower.
// The loop over the lanes is kept rolled (GCC unroll 1) for GCC's loop vectoriser: unrolled
// first, it is left to the SLP vectoriser, which leaves selects (a NaN-aware max) scalar.
// Even rolled, GCC 12 keeps the lanes in memory when n is not a constant, so fold_row, what
// the reductions and softmax run over contiguous rows, spells the folds of float rows with
// GCC's vector types: the same lanes, the same per-lane arithmetic as the op's reduce (checked
// bit for bit against lane_fold in tests/core/test_reduce.cpp), the same tail and tree.
// Over [4096, 1024] floats, 1 thread: sum 0.85 -> 0.35 ms, amax 0.54 -> 0.40 ms; PyTorch 2.15
// takes 0.26 and 0.29 (it sums in float; our double lanes widen 4 floats per instruction).
template <class Acc>
constexpr int kFoldLanes = 128 / sizeof(Acc);

namespace lanes {
// The tail f(i), i in [i, n) (fewer than L), into lanes 0.., then the tree.
template <int L, class Op, class Acc, class F>
inline Acc finish(const Op& op, Acc* acc, int64_t i, int64_t n, const F& f) {
  for (int k = 0; i + k < n; ++k) acc[k] = op.reduce(acc[k], f(i + k));
  for (int w = L / 2; w > 0; w /= 2)
    for (int k = 0; k < w; ++k) acc[k] = op.combine(acc[k], acc[k + w]);
  return acc[0];
}

typedef float f32x4 __attribute__((vector_size(16)));
typedef float f32x8 __attribute__((vector_size(32)));
typedef double f64x4 __attribute__((vector_size(32)));
template <class V, class T>  // by reference: returning a 32-byte vector without AVX warns (ABI)
inline void load(V& v, const T* p) {
  memcpy(&v, p, sizeof v);
}
// acc += 4 floats widened to double. GCC splits __builtin_convertvector's 256-bit widening
// into two 128-bit ones (znver3 tuning), which made the sum 1.6x slower than the AVX one.
inline void add_widened(f64x4& acc, const float* p) {
#if defined(__AVX__)
  acc += reinterpret_cast<f64x4>(_mm256_cvtps_pd(_mm_loadu_ps(p)));
#else
  f32x4 x;
  load(x, p);
  acc += __builtin_convertvector(x, f64x4);
#endif
}
template <class Op>
constexpr bool is_extreme = std::is_same_v<Op, reduce_ops::Max<float>> || std::is_same_v<Op, reduce_ops::Min<float>>;
}  // namespace lanes

template <class Op, class F, class Acc = decltype(std::declval<Op>().identity()), int L = kFoldLanes<Acc>>
inline Acc lane_fold(const Op& op, int64_t n, const F& f) {
  Acc acc[L];
  for (int k = 0; k < L; ++k) acc[k] = op.identity();
  int64_t i = 0;
  for (; i + L <= n; i += L)
#pragma GCC unroll 1
    for (int k = 0; k < L; ++k) acc[k] = op.reduce(acc[k], f(i + k));
  return lanes::finish<L>(op, acc, i, n, f);
}

// lane_fold of p[0, n) (bfloat16/float16 widened to float, as reduce_ops' value_t).
template <class Op, class T>
inline auto fold_row(const Op& op, const T* p, int64_t n) {
  using namespace lanes;
  using Acc = decltype(op.identity());
  constexpr int L = kFoldLanes<Acc>;
  const auto f = [p](int64_t i) { return static_cast<reduce_ops::value_t<T>>(p[i]); };
  if constexpr (std::is_same_v<T, float> && std::is_same_v<Op, reduce_ops::Sum<double>>) {
    static_assert(L == 16);  // lane 4j + l is v[j][l]
    f64x4 v[4] = {};
    int64_t i = 0;
    for (; i + L <= n; i += L)
      for (int j = 0; j < 4; ++j) add_widened(v[j], p + i + 4 * j);
    double acc[L];
    memcpy(acc, v, sizeof v);
    return finish<L>(op, acc, i, n, f);
  } else if constexpr (std::is_same_v<T, float> && is_extreme<Op>) {
    static_assert(L == 32);  // lane 8j + l is v[j][l]
    constexpr bool is_max = std::is_same_v<Op, reduce_ops::Max<float>>;
    f32x8 v[4];
    for (int j = 0; j < 4; ++j) v[j] = f32x8{} + op.identity();
    int64_t i = 0;
    for (; i + L <= n; i += L)
      for (int j = 0; j < 4; ++j) {
        f32x8 x;
        load(x, p + i + 8 * j);
        v[j] = ((v[j] != v[j]) | (is_max ? v[j] > x : v[j] < x)) ? v[j] : x;  // reduce_ops::Max/Min::reduce
      }
    float acc[L];
    memcpy(acc, v, sizeof v);
    return finish<L>(op, acc, i, n, f);
  } else {
    return lane_fold(op, n, f);
  }
}

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
