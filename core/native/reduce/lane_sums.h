// Row folds for the CPU kernels (reductions, softmax, batch_norm, layer_norm): accumulators
// in fixed lanes, so results do not depend on threads and the compiler can vectorise without
// reassociating; GCC vector types for the float rows of sum/amax/amin, AVX-512 paths for
// float32 batch/layer norm where the build targets it.
// Included by CPU kernel files only.
#pragma once

#include <string.h>

#include <algorithm>
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
// Over [4096, 1024] floats, 1 thread: sum 0.85 -> 0.35 ms, amax 0.54 -> 0.40 ms with the
// first vector folds; with float sums (Note [Float sums in a cascade]) and NaN-blind extremes
// (Note [NaN-blind extremes]) both take 0.18 ms when the rows are in L2 and 0.30-0.35 ms from
// L3 (load 4: memory-bound, as PyTorch 2.15's 0.26-0.30 ms).
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

typedef float f32x8 __attribute__((vector_size(32)));
template <class V, class T>  // by reference: returning a 32-byte vector without AVX warns (ABI)
inline void load(V& v, const T* p) {
  memcpy(&v, p, sizeof v);
}
template <class Op>
constexpr bool is_extreme = std::is_same_v<Op, reduce_ops::Max<float>> || std::is_same_v<Op, reduce_ops::Min<float>>;

// Note [Float sums in a cascade]
// Rows of float are summed in 32 float lanes (4 vectors of 8), as PyTorch does: lanes of double
// widen 4 floats per instruction, which held the [4096, 1024] row sum at 0.35 ms against
// PyTorch's 0.26. A float lane that adds all its n / 32 values would lose accuracy in
// proportion to n; a cascade keeps it flat. Level 0 (in registers) adds B = 2^b steps of the
// lanes and is then added into level 1 and restarted; level k is added into level k + 1 after
// every B of its own carries. With kCascadeLevels levels and B^kCascadeLevels >= the number of
// steps, no level adds more than B values: B ~ steps^(1/4), so each lane's error is at most
// about 4 * B * eps relative to the sum of |x| (PyTorch's cascade_sum has the same shape).
// The levels of each lane are then added, lowest first, and the lanes merged by Note [Lane
// folds]'s tree, in float down to 8 lanes and in double from there; the tail (n mod 32) is
// summed in double and added last. The order depends on n only. tests/core/test_reduce.cpp
// checks up to 10^7 values against a double sum: 10^6..10^7 uniform floats come within 3e-9 to
// 9e-9 of it (PyTorch 2.15's sum: 2e-8 to 9e-8; a plain float loop: 1e-5 to 3e-5). Like
// PyTorch's, a float lane can overflow where double lanes did not (partial sums near 3e38).
constexpr int kCascadeLevels = 4;

inline double cascade_sum(const float* p, int64_t n) {
  constexpr int L = kFoldLanes<float>;
  static_assert(L == 32);  // lane 8j + l is the vectors' [j][l]
  const int64_t steps = n / L;
  int b = 4;
  while (b < 16 && (int64_t{1} << (b * kCascadeLevels)) < steps) ++b;
  const int64_t B = int64_t{1} << b;
  f32x8 up[kCascadeLevels - 1][4] = {};  // levels 1..
  for (int64_t s = 0; s < steps;) {
    const int64_t e = std::min(steps, s + B);
    f32x8 v[4] = {};  // level 0
    for (; s < e; ++s)
      for (int j = 0; j < 4; ++j) {
        f32x8 x;
        load(x, p + s * L + 8 * j);
        v[j] += x;
      }
    for (int j = 0; j < 4; ++j) up[0][j] += v[j];
    for (int k = 1; k < kCascadeLevels - 1 && (s & ((int64_t{1} << (b * (k + 1))) - 1)) == 0; ++k)
      for (int j = 0; j < 4; ++j) up[k][j] += up[k - 1][j], up[k - 1][j] = f32x8{};
  }
  // The levels, lowest first, then the tree of Note [Lane folds] down to 8 lanes in float (a
  // scalar tree of 32 doubles cost as much as the 32 steps of a 1024-row), the rest in double.
  f32x8 t[4];
  for (int j = 0; j < 4; ++j) {
    t[j] = up[0][j];
    for (int k = 1; k < kCascadeLevels - 1; ++k) t[j] += up[k][j];
  }
  const f32x8 w = (t[0] + t[2]) + (t[1] + t[3]);
  double d[8];
  for (int l = 0; l < 8; ++l) d[l] = static_cast<double>(w[l]);
  double tail = 0;
  for (int64_t i = steps * L; i < n; ++i) tail += static_cast<double>(p[i]);
  return (((d[0] + d[4]) + (d[2] + d[6])) + ((d[1] + d[5]) + (d[3] + d[7]))) + tail;
}

// Note [NaN-blind extremes]
// MAXPS/MINPS (AVX) return their second operand when either is NaN, so max(a, x) is
// reduce_ops::Max::reduce(a, x) whenever the lane a holds no NaN (ties too: both return x).
// The vector fold therefore runs NaN-blind, one instruction a vector, and notes whether any
// value was NaN in a mask: max(a, x) is x when x is NaN, so one unordered compare of two
// lanes' vectors after each step sees every NaN (comparing the loaded values instead made GCC
// load each vector twice). A row with a NaN is folded again by lane_fold, so the result is
// lane_fold's bit for bit. The blend that kept NaN in the
// lanes cost 4 instructions a vector on one dependency chain: amax over [4096, 1024] 0.40 ms.
template <bool IsMax>  // a = max(a, x) (min), NaN-blind
inline void fold_extreme(f32x8& a, const f32x8& x) {
#if defined(__AVX__)
  const __m256 u = reinterpret_cast<__m256>(a), w = reinterpret_cast<__m256>(x);
  a = reinterpret_cast<f32x8>(IsMax ? _mm256_max_ps(u, w) : _mm256_min_ps(u, w));
#else
  a = (IsMax ? a > x : a < x) ? a : x;
#endif
}
typedef int32_t i32x8 __attribute__((vector_size(32)));
inline void note_nan(i32x8& mask, const f32x8& a, const f32x8& b) {
#if defined(__AVX__)
  mask |= reinterpret_cast<i32x8>(_mm256_cmp_ps(reinterpret_cast<__m256>(a), reinterpret_cast<__m256>(b), _CMP_UNORD_Q));
#else
  mask |= (a != a) | (b != b);
#endif
}
inline bool any_set(const i32x8& mask) {
  for (int l = 0; l < 8; ++l)
    if (mask[l]) return true;
  return false;
}

// Note [Byte folds]
// any/all of a row of bytes (bool, read as bytes by Note [Bools read as bytes], and uint8):
// the answer is exact in any order, so 32 bytes at a time are ORed (any) or folded by their
// unsigned minimum (all: no zero byte), one instruction a vector. The lane fold of bools
// stayed scalar (GCC does not vectorise `a || x != 0` over lanes of bool).
template <bool IsAny>
inline bool byte_any_all(const uint8_t* p, int64_t n) {
  typedef uint8_t u8x32 __attribute__((vector_size(32)));
  u8x32 acc = IsAny ? u8x32{} : ~u8x32{};
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    u8x32 x;
    load(x, p + i);
    if constexpr (IsAny) acc |= x;
    else acc = acc < x ? acc : x;
  }
  uint8_t r = IsAny ? 0 : 0xff;
  for (int l = 0; l < 32; ++l) r = IsAny ? (r | acc[l]) : std::min(r, acc[l]);
  for (; i < n; ++i) r = IsAny ? (r | p[i]) : std::min(r, p[i]);
  return r != 0;
}
template <class Op>
constexpr bool is_any_all = std::is_same_v<Op, reduce_ops::Any> || std::is_same_v<Op, reduce_ops::All>;
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
    return cascade_sum(p, n);  // See Note [Float sums in a cascade]
  } else if constexpr (sizeof(T) == 1 && std::is_integral_v<T> && is_any_all<Op>) {
    return byte_any_all<std::is_same_v<Op, reduce_ops::Any>>(reinterpret_cast<const uint8_t*>(p), n);  // Note [Byte folds]
  } else if constexpr (std::is_same_v<T, float> && is_extreme<Op>) {
    static_assert(L == 32);  // lane 8j + l is v[j][l]; See Note [NaN-blind extremes]
    constexpr bool is_max = std::is_same_v<Op, reduce_ops::Max<float>>;
    f32x8 v[4];
    for (int j = 0; j < 4; ++j) v[j] = f32x8{} + op.identity();
    i32x8 nan{};
    int64_t i = 0;
    for (; i + L <= n; i += L) {
      f32x8 x0, x1, x2, x3;  // named: an array of them made GCC copy the row through the stack
      load(x0, p + i);
      load(x1, p + i + 8);
      load(x2, p + i + 16);
      load(x3, p + i + 24);
      fold_extreme<is_max>(v[0], x0);
      fold_extreme<is_max>(v[1], x1);
      fold_extreme<is_max>(v[2], x2);
      fold_extreme<is_max>(v[3], x3);
      note_nan(nan, v[0], v[1]);  // a NaN x is in v until the next step: See Note [NaN-blind extremes]
      note_nan(nan, v[2], v[3]);
    }
    for (int64_t k = i; k < n; ++k) nan[0] |= p[k] != p[k];
    if (any_set(nan)) return lane_fold(op, n, f);
    if (i < n) {  // the tail into lanes 0.., as finish
      float acc[L];
      memcpy(acc, v, sizeof v);
      for (int k = 0; i + k < n; ++k) acc[k] = op.reduce(acc[k], f(i + k));
      memcpy(v, acc, sizeof v);
    }
    // finish's tree, the first two levels a vector at a time (no NaN: combine is MAXPS/MINPS)
    fold_extreme<is_max>(v[0], v[2]);
    fold_extreme<is_max>(v[1], v[3]);
    fold_extreme<is_max>(v[0], v[1]);
    float acc[8];
    memcpy(acc, v, sizeof acc);
    for (int w = 4; w > 0; w /= 2)
      for (int k = 0; k < w; ++k) acc[k] = op.combine(acc[k], acc[k + w]);
    return acc[0];
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
