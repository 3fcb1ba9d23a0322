// The packed GEMM's building blocks, shared by gemm_packed.cpp and gemm_nt.cpp: vector ops
// per (type, ISA), the register-tile shapes, the micro-kernels (packed A panel; A rows read in
// place; dot-product blocks), and the packing of operands into panels (which converts
// bfloat16 operands to float panels). Only meaningful when GR_PACKED_GEMM is set (AVX-512,
// or AVX2 with FMA).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <type_traits>

#include "core/half.h"

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#define GR_PACKED_GEMM 1
#endif

#if GR_PACKED_GEMM
namespace gr::native::gemm_detail {

// ---- vector ops: one struct per (type, ISA) ----
#if defined(__AVX512F__)
struct VecF {
  using T = float;
  using V = __m512;
  static constexpr int L = 16;
  static V load(const T* p) { return _mm512_loadu_ps(p); }
  static void store(T* p, V v) { _mm512_storeu_ps(p, v); }
  static V set1(T x) { return _mm512_set1_ps(x); }
  static V zero() { return _mm512_setzero_ps(); }
  static V fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static T hsum(V v) {  // folds halves with permutes (GCC 12 warns inside _mm512_reduce_add_ps)
    v = _mm512_add_ps(v, _mm512_permutex2var_ps(v, _mm512_set_epi32(7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8), v));
    v = _mm512_add_ps(v, _mm512_permutex2var_ps(v, _mm512_set_epi32(11, 10, 9, 8, 15, 14, 13, 12, 3, 2, 1, 0, 7, 6, 5, 4), v));
    v = _mm512_add_ps(v, _mm512_permutex2var_ps(v, _mm512_set_epi32(13, 12, 15, 14, 9, 8, 11, 10, 5, 4, 7, 6, 1, 0, 3, 2), v));
    v = _mm512_add_ps(v, _mm512_permutex2var_ps(v, _mm512_set_epi32(14, 15, 12, 13, 10, 11, 8, 9, 6, 7, 4, 5, 2, 3, 0, 1), v));
    return _mm512_cvtss_f32(v);
  }
};
struct VecD {
  using T = double;
  using V = __m512d;
  static constexpr int L = 8;
  static V load(const T* p) { return _mm512_loadu_pd(p); }
  static void store(T* p, V v) { _mm512_storeu_pd(p, v); }
  static V set1(T x) { return _mm512_set1_pd(x); }
  static V zero() { return _mm512_setzero_pd(); }
  static V fma(V a, V b, V c) { return _mm512_fmadd_pd(a, b, c); }
  static V mul(V a, V b) { return _mm512_mul_pd(a, b); }
  static V add(V a, V b) { return _mm512_add_pd(a, b); }
  static T hsum(V v) {
    v = _mm512_add_pd(v, _mm512_permutex2var_pd(v, _mm512_set_epi64(3, 2, 1, 0, 7, 6, 5, 4), v));
    v = _mm512_add_pd(v, _mm512_permutex2var_pd(v, _mm512_set_epi64(5, 4, 7, 6, 1, 0, 3, 2), v));
    v = _mm512_add_pd(v, _mm512_permutex2var_pd(v, _mm512_set_epi64(6, 7, 4, 5, 2, 3, 0, 1), v));
    return _mm512_cvtsd_f64(v);
  }
};
// 16 floats rounded to bfloat16 as BFloat16(float) rounds them (nearest even, NaN -> 0x7fc0;
// vcvtneps2bf16 would flush subnormals).
inline void store_rounded(BFloat16* p, __m512 v) {
  const __m512i u = _mm512_castps_si512(v);
  const __m512i odd = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
  __m512i r = _mm512_srli_epi32(_mm512_add_epi32(u, _mm512_add_epi32(odd, _mm512_set1_epi32(0x7fff))), 16);
  r = _mm512_mask_mov_epi32(r, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), _mm512_set1_epi32(0x7fc0));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtepi32_epi16(r));
}
// A row of NV vectors (16 NV consecutive floats) rounded to bfloat16. With AVX512_BF16 two
// vectors at a time through vcvtne2ps2bf16, which rounds to nearest even as BFloat16(float)
// but flushes subnormal inputs to zero and keeps NaN payloads: a pair holding either takes
// store_rounded (a third of the instructions of the epilogue of train_gpt's bfloat16 GEMMs).
template <int NV>
inline void store_rounded_row(BFloat16* p, const __m512 (&x)[NV]) {
  int v = 0;
#if defined(__AVX512BF16__)
  constexpr int kNanOrSubnormal = 0x01 | 0x80 | 0x20;  // vfpclassps: QNaN, SNaN, denormal
  for (; v + 2 <= NV; v += 2) {
    if (_mm512_fpclass_ps_mask(x[v], kNanOrSubnormal) | _mm512_fpclass_ps_mask(x[v + 1], kNanOrSubnormal)) {
      store_rounded(p + v * 16, x[v]);
      store_rounded(p + v * 16 + 16, x[v + 1]);
    } else {
      _mm512_storeu_si512(p + v * 16, (__m512i)_mm512_cvtne2ps_pbh(x[v + 1], x[v]));
    }
  }
#endif
  for (; v < NV; ++v) store_rounded(p + v * 16, x[v]);
}
// Two register tiles fit the 32 vector registers: 12 rows x 2 vectors ("tall") and 8 rows
// x 3 vectors ("wide") of accumulators, plus the B vectors and a broadcast.
constexpr int kTallMR = 12, kTallNV = 2, kWideMR = 8, kWideNV = 3;
// rows_kernel's tile (A rows read in place): 8 rows x 2 vectors.
constexpr int kRowsMR = 8, kRowsNV = 2;
#else
struct VecF {
  using T = float;
  using V = __m256;
  static constexpr int L = 8;
  static V load(const T* p) { return _mm256_loadu_ps(p); }
  static void store(T* p, V v) { _mm256_storeu_ps(p, v); }
  static V set1(T x) { return _mm256_set1_ps(x); }
  static V zero() { return _mm256_setzero_ps(); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static T hsum(V v) {
    __m128 x = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    x = _mm_hadd_ps(x, x);
    return _mm_cvtss_f32(_mm_hadd_ps(x, x));
  }
};
struct VecD {
  using T = double;
  using V = __m256d;
  static constexpr int L = 4;
  static V load(const T* p) { return _mm256_loadu_pd(p); }
  static void store(T* p, V v) { _mm256_storeu_pd(p, v); }
  static V set1(T x) { return _mm256_set1_pd(x); }
  static V zero() { return _mm256_setzero_pd(); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_pd(a, b, c); }
  static V mul(V a, V b) { return _mm256_mul_pd(a, b); }
  static V add(V a, V b) { return _mm256_add_pd(a, b); }
  static T hsum(V v) {
    const __m128d x = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    return _mm_cvtsd_f64(_mm_hadd_pd(x, x));
  }
};
// 8 floats rounded to bfloat16 as BFloat16(float) rounds them (nearest even, NaN -> 0x7fc0).
inline void store_rounded(BFloat16* p, __m256 v) {
  const __m256i u = _mm256_castps_si256(v);
  const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
  __m256i r = _mm256_srli_epi32(_mm256_add_epi32(u, _mm256_add_epi32(odd, _mm256_set1_epi32(0x7fff))), 16);
  r = _mm256_blendv_epi8(r, _mm256_set1_epi32(0x7fc0), _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
  // packus leaves 16-bit lanes 0-3 and 8-11 holding r's values (all below 2^16): gather them.
  const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0x08);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_castsi256_si128(packed));
}
template <int NV>
inline void store_rounded_row(BFloat16* p, const __m256 (&x)[NV]) {
  for (int v = 0; v < NV; ++v) store_rounded(p + v * 8, x[v]);
}
// 16 vector registers: 6 x 2 accumulators + 2 B vectors + 1 broadcast (one tile shape).
constexpr int kTallMR = 6, kTallNV = 2, kWideMR = 6, kWideNV = 2;
// rows_kernel's tile: 4 rows x 3 vectors (12 accumulators + 3 B vectors + a broadcast; 8 x 2
// would need 19 registers, and the spilled accumulators' store-reload chain made the weight
// gradients of convolutions about 1.5x slower).
constexpr int kRowsMR = 4, kRowsNV = 3;
#endif

template <class T>
struct VecOf;
template <>
struct VecOf<float> {
  using S = VecF;
};
template <>
struct VecOf<double> {
  using S = VecD;
};

// One register-tile shape (MR rows x NV vectors) and the cache blocking that goes with it:
// KC x NR panels of B stream from L2 (B block ~1 MiB), MR x KC panels of A stay in L1, and a
// packed A is packed MB x KC (~64 KiB) at a time (See Note [Packed A blocks in L2]).
template <class T, int MR_, int NV_>
struct Tile {
  using S = typename VecOf<T>::S;
  static constexpr int MR = MR_, NV = NV_, NR = NV_ * S::L;
  static constexpr int64_t KC = sizeof(T) == 4 ? 384 : 256;
  static constexpr int64_t NB = (int64_t(1) << 20) / (KC * int64_t(sizeof(T))) / NR * NR;
  static constexpr int64_t MB = std::max<int64_t>(MR, (int64_t(64) << 10) / (KC * int64_t(sizeof(T))) / MR * MR);
};

// Stores a finished MR x NV-vector tile: c = alpha * acc + beta * c (+ bias[NR] on every
// row when given; See Note [Bias in the GEMM epilogue]), row stride ldc. CT is T, or
// bfloat16 for a float tile (each value rounded once, as BFloat16(float); beta must be 0).
// Always inlined: as a call, the accumulators went through memory (24 stores at the kernel's
// entry, 24 after its loop, then loads).
template <class Tl, class T, class CT>
[[gnu::always_inline]] inline void store_tile(typename Tl::S::V (&acc)[Tl::MR][Tl::NV], CT* __restrict c, int64_t ldc,
                                              T alpha, T beta, const T* __restrict bias) {
  using S = typename Tl::S;
  using V = typename S::V;
  constexpr int MR = Tl::MR, NV = Tl::NV, L = S::L;
  if (alpha != T(1)) {
    V va = S::set1(alpha);
#pragma GCC unroll 32
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[r][v] = S::mul(va, acc[r][v]);
  }
  if constexpr (!std::is_same_v<CT, T>) {
#pragma GCC unroll 32
    for (int r = 0; r < MR; ++r) {
      V x[NV];
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) x[v] = bias ? S::add(acc[r][v], S::load(bias + v * L)) : acc[r][v];
      store_rounded_row(c + r * ldc, x);
    }
  } else if (bias) {  // the row vector is added to the finished product (as a separate add would)
    V bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) bv[v] = S::load(bias + v * L);
    if (beta != T(0)) {
#pragma GCC unroll 32
      for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v)
          acc[r][v] = beta == T(1) ? S::add(S::load(c + r * ldc + v * L), acc[r][v])
                                   : S::fma(S::set1(beta), S::load(c + r * ldc + v * L), acc[r][v]);
    }
#pragma GCC unroll 32
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) S::store(c + r * ldc + v * L, S::add(acc[r][v], bv[v]));
  } else if (beta == T(0)) {
#pragma GCC unroll 32
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) S::store(c + r * ldc + v * L, acc[r][v]);
  } else if (beta == T(1)) {
#pragma GCC unroll 32
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) S::store(c + r * ldc + v * L, S::add(S::load(c + r * ldc + v * L), acc[r][v]));
  } else {
    V vb = S::set1(beta);
#pragma GCC unroll 32
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) S::store(c + r * ldc + v * L, S::fma(vb, S::load(c + r * ldc + v * L), acc[r][v]));
  }
}

// c[MR x NR] (row stride ldc) = alpha * A x b-panel + beta * c (+ bias, as store_tile). A: a
// packed panel (kc x MR values, k-major as packed below), or with kRows MR rows read in
// place (A(r, k) at a[r * lda + k]; See Note [GEMM operands in place]). b: kc rows of NR
// values, ldb apart (NR when packed).
template <class Tl, bool kRows, class T, class CT>
void micro_kernel_impl(int64_t kc, const T* __restrict a, int64_t lda, const T* __restrict b, int64_t ldb,
                       CT* __restrict c, int64_t ldc, T alpha, T beta, const T* __restrict bias = nullptr) {
  using S = typename Tl::S;
  using V = typename S::V;
  constexpr int MR = Tl::MR, NV = Tl::NV, L = S::L;
  V acc[MR][NV];
#pragma GCC unroll 32
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[r][v] = S::zero();
#pragma GCC unroll 2
  for (int64_t k = 0; k < kc; ++k) {
    V bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) bv[v] = S::load(b + v * L);
#pragma GCC unroll 32
    for (int r = 0; r < MR; ++r) {
      V av = S::set1(kRows ? a[r * lda] : a[r]);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[r][v] = S::fma(av, bv[v], acc[r][v]);
    }
    a += kRows ? 1 : MR;
    b += ldb;
  }
  store_tile<Tl>(acc, c, ldc, alpha, beta, bias);
}

// The micro-kernel on a packed A panel.
template <class Tl, class T>
void micro_kernel(int64_t kc, const T* __restrict a, const T* __restrict b, int64_t ldb, T* __restrict c, int64_t ldc,
                  T alpha, T beta) {
  micro_kernel_impl<Tl, false>(kc, a, 0, b, ldb, c, ldc, alpha, beta);
}

// Merges a partial tile (mr <= MR rows, nr <= NR columns) computed into tmp (row stride NR,
// alpha applied) into c: c = tmp + beta * c (+ bias), converted to CT.
template <class T, class CT>
void merge_edge(const T* tmp, int64_t NR, CT* c, int64_t ldc, int64_t mr, int64_t nr, T beta, const T* bias) {
  for (int64_t r = 0; r < mr; ++r)
    for (int64_t j = 0; j < nr; ++j) {
      const T x = beta == T(0) ? tmp[r * NR + j] : tmp[r * NR + j] + beta * static_cast<T>(c[r * ldc + j]);
      c[r * ldc + j] = static_cast<CT>(bias ? x + bias[j] : x);
    }
}

// A partial tile: full kernel into a buffer, then merge. With kRows, A's rows are read in
// place, so all MR of them must exist (mr < MR only for partial columns).
template <class Tl, bool kRows = false, class T, class CT>
void edge_kernel(int64_t kc, const T* a, int64_t lda, const T* b, int64_t ldb, CT* c, int64_t ldc, int64_t mr,
                 int64_t nr, T alpha, T beta, const T* bias = nullptr) {
  constexpr int MR = Tl::MR, NR = Tl::NR;
  alignas(64) T tmp[MR * NR];
  micro_kernel_impl<Tl, kRows>(kc, a, lda, b, ldb, tmp, NR, alpha, T(0));
  merge_edge(tmp, NR, c, ldc, mr, nr, beta, bias);
}
template <class Tl, class T>
void edge_kernel(int64_t kc, const T* a, const T* b, int64_t ldb, T* c, int64_t ldc, int64_t mr, int64_t nr, T alpha,
                 T beta) {
  edge_kernel<Tl, false>(kc, a, 0, b, ldb, c, ldc, mr, nr, alpha, beta);
}

// ---- bfloat16 operands: widened to float while packing (a shift: bf16 is float's top half) ----
inline __m256 load8_float(const float* p) { return _mm256_loadu_ps(p); }
inline __m256 load8_float(const BFloat16* p) {
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}
// d[0, n) = s[0, n) as float.
template <class S>
void widen(float* __restrict d, const S* __restrict s, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(d + i, load8_float(s + i));
  for (; i < n; ++i) d[i] = static_cast<float>(s[i]);
}

// ---- in-register transposes for packing lines that run along k ----
// Each writes d[k * ds + r] = s[r * rs + k] for an 8x8 / 4x4 block (8x8 also from bfloat16).
// The 8x8 transpose of rows r[0..8) in registers: out[i] holds element i of every row.
inline void transpose8_regs(const __m256 (&r)[8], __m256 (&out)[8]) {
  __m256 t[8], u[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    u[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
    u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
    u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
  }
  for (int i = 0; i < 4; ++i) {
    out[i] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x20);
    out[i + 4] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x31);
  }
}
template <class S>
void transpose8x8(float* d, int64_t ds, const S* s, int64_t rs) {
  __m256 r[8], out[8];
  for (int i = 0; i < 8; ++i) r[i] = load8_float(s + i * rs);
  transpose8_regs(r, out);
  for (int i = 0; i < 8; ++i) _mm256_storeu_ps(d + i * ds, out[i]);
}
inline void transpose4x4(double* d, int64_t ds, const double* s, int64_t rs) {
  __m256d r0 = _mm256_loadu_pd(s), r1 = _mm256_loadu_pd(s + rs), r2 = _mm256_loadu_pd(s + 2 * rs),
          r3 = _mm256_loadu_pd(s + 3 * rs);
  __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1), t2 = _mm256_unpacklo_pd(r2, r3),
          t3 = _mm256_unpackhi_pd(r2, r3);
  _mm256_storeu_pd(d, _mm256_permute2f128_pd(t0, t2, 0x20));
  _mm256_storeu_pd(d + ds, _mm256_permute2f128_pd(t1, t3, 0x20));
  _mm256_storeu_pd(d + 2 * ds, _mm256_permute2f128_pd(t0, t2, 0x31));
  _mm256_storeu_pd(d + 3 * ds, _mm256_permute2f128_pd(t1, t3, 0x31));
}
inline void transpose4x4(float* d, int64_t ds, const float* s, int64_t rs) {
  __m128 r0 = _mm_loadu_ps(s), r1 = _mm_loadu_ps(s + rs), r2 = _mm_loadu_ps(s + 2 * rs), r3 = _mm_loadu_ps(s + 3 * rs);
  _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
  _mm_storeu_ps(d, r0);
  _mm_storeu_ps(d + ds, r1);
  _mm_storeu_ps(d + 2 * ds, r2);
  _mm_storeu_ps(d + 3 * ds, r3);
}
template <int G, class S>
void transpose_tile(float* d, int64_t ds, const S* s, int64_t rs) {
  if constexpr (G == 8) transpose8x8(d, ds, s, rs);
  else transpose4x4(d, ds, s, rs);
}
template <int G>
void transpose_tile(double* d, int64_t ds, const double* s, int64_t rs) {
  transpose4x4(d, ds, s, rs);
}
// Six lines of 8 values (line r at s + r * rs) into d[k * 6 + r], k < 8: the 8x8 transpose
// with two zero lines, each output row stored as 4 + 2 floats. For AVX2's 6-row panels,
// which 8x8 and 4x4 tiles do not divide (element by element, packing took 8% of a GEMM).
template <class S>
void transpose6x8(float* d, const S* s, int64_t rs) {
  __m256 r[8], out[8];
  for (int i = 0; i < 6; ++i) r[i] = load8_float(s + i * rs);
  r[6] = r[7] = _mm256_setzero_ps();
  transpose8_regs(r, out);
  for (int i = 0; i < 8; ++i) {
    _mm_storeu_ps(d + i * 6, _mm256_castps256_ps128(out[i]));
    _mm_storel_pi(reinterpret_cast<__m64*>(d + i * 6 + 4), _mm256_extractf128_ps(out[i], 1));
  }
}

// Tile size: 8x8 for float when R allows, else 4x4.
template <class T, int R>
constexpr int kTile = sizeof(T) == 4 && R % 8 == 0 ? 8 : 4;

// Packs R lines (line r at s + r * rs, contiguous along k) into d[k * R + r] for the
// leading k that whole transpose tiles cover; returns how many k were done. bfloat16
// lines have 8x8 (and 6x8) tiles only.
template <int R, class T, class S>
int64_t transpose_lines(T* d, const S* s, int64_t rs, int64_t kc) {
  constexpr int G = kTile<T, R>;
  if constexpr (R == 6 && std::is_same_v<T, float>) {
    const int64_t kend = kc / 8 * 8;
    for (int64_t k = 0; k < kend; k += 8) transpose6x8(d + k * 6, s + k, rs);
    return kend;
  } else if constexpr (R % G != 0 || (G != 8 && !std::is_same_v<S, T>)) {
    return 0;
  } else {
    const int64_t kend = kc / G * G;
    for (int64_t k = 0; k < kend; k += G)
      for (int g = 0; g < R; g += G) transpose_tile<G>(d + k * R + g, R, s + g * rs + k, rs);
    return kend;
  }
}

// d[0, R) = s[0, R) in whole vectors where R allows (a memcpy of 64 bytes became four
// 16-byte moves with GCC's Zen 3 tuning).
template <int R, class T>
void copy_piece(T* __restrict d, const T* __restrict s) {
  using V = typename VecOf<T>::S;
  if constexpr (R % V::L == 0) {
#pragma GCC unroll 4
    for (int i = 0; i < R; i += V::L) V::store(d + i, V::load(s + i));
  } else {
    std::memcpy(d, s, R * sizeof(T));
  }
}

// Packs `width` lines of kc elements into panels of R lines: panel p holds lines
// [p*R, p*R+R) as dst[p*R*kc + k*R + r], zero-filled past `width`. Element (line r, k) is
// src[r * rs + k * ks], of type S: T itself, or bfloat16 for float panels.
template <class T, int R, class S = T>
void pack_block(T* __restrict dst, const S* __restrict src, int64_t rs, int64_t ks, int64_t width, int64_t kc) {
  const int64_t full = width / R * R;
  if (rs == 1) {
    // Lines are contiguous: walk src row by row (k), scattering R-wide pieces to the panels,
    // so reads stream instead of striding across pages.
    for (int64_t k = 0; k < kc; ++k) {
      const S* s = src + k * ks;
      if (k + 8 < kc)  // rows 8 ahead, as pack_pairs (float: +0-3% on train_gpt tiny, in the noise)
        for (int64_t p = 0; p < width; p += 64 / static_cast<int64_t>(sizeof(S)))
          _mm_prefetch(reinterpret_cast<const char*>(s + 8 * ks + p), _MM_HINT_T0);
      for (int64_t p = 0; p < full; p += R) {
        if constexpr (std::is_same_v<S, T>) copy_piece<R>(dst + p * kc + k * R, s + p);
        else widen(dst + p * kc + k * R, s + p, R);
      }
    }
  } else {
    for (int64_t p = 0; p < full; p += R) {
      T* d = dst + p * kc;
      const S* s = src + p * rs;
      int64_t k = 0;
      if (ks == 1) k = transpose_lines<R>(d, s, rs, kc);
      for (; k < kc; ++k)
        for (int r = 0; r < R; ++r) d[k * R + r] = static_cast<T>(s[r * rs + k * ks]);
    }
  }
  if (full < width) {
    const int64_t rem = width - full;
    T* d = dst + full * kc;
    const S* s = src + full * rs;
    // One fixed-length loop per k: a separate zero-fill loop of R - rem became a `rep stos`
    // per k, a quarter of the packing of A for the 128-row weight gradients.
    for (int64_t k = 0; k < kc; ++k)
      for (int r = 0; r < R; ++r) d[k * R + r] = r < rem ? static_cast<T>(s[r * rs + k * ks]) : T(0);
  }
}

// Per-thread buffers, 64-byte aligned, grown on demand and kept for reuse: 0 and 1 hold the
// packed A and B panels, 2 a float C rounded to bfloat16 afterwards (packed_gemm_any).
template <class T>
T* scratch(int which, size_t elements) {
  struct Buf {
    std::unique_ptr<T[], decltype(&std::free)> p{nullptr, &std::free};
    size_t n = 0;
  };
  thread_local Buf bufs[3];
  Buf& b = bufs[which];
  if (b.n < elements) {
    size_t bytes = (elements * sizeof(T) + 63) / 64 * 64;
    b.p.reset(static_cast<T*>(std::aligned_alloc(64, bytes)));
    if (!b.p) throw std::bad_alloc();
    b.n = elements;
  }
  return b.p.get();
}

// c[MR x NR] (+)= a-rows x b-panel where row r of A is read in place at a + r * lda (one
// broadcast per row and k), so A needs no packing; b is a packed [kc][NR] panel. Tl is
// Tile<T, kRowsMR, kRowsNV>.
template <class Tl, class T>
void rows_kernel(int64_t kc, const T* __restrict a, int64_t lda, const T* __restrict b, T* __restrict c, int64_t ldc,
                 bool accumulate) {
  using S = typename Tl::S;
  using V = typename S::V;
  constexpr int MR = Tl::MR, NV = Tl::NV, L = S::L;
  const T* ar[MR];
  for (int r = 0; r < MR; ++r) ar[r] = a + r * lda;
  V acc[MR][NV];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[r][v] = S::zero();
  for (int64_t k = 0; k < kc; ++k) {
    V bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) bv[v] = S::load(b + k * NV * L + v * L);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const V av = S::set1(ar[r][k]);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[r][v] = S::fma(av, bv[v], acc[r][v]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      S::store(c + r * ldc + v * L, accumulate ? S::add(S::load(c + r * ldc + v * L), acc[r][v]) : acc[r][v]);
}

// C[MB x NB] (+)= dot products of MB rows of A with NB rows of B over k in [0, K): vector
// partial sums along k, reduced at the end (for products with few columns and a long K).
template <class S, int MB, int NB, class T>
void dot_block(int64_t K, const T* A, int64_t lda, const T* B, int64_t ldb, T* C, int64_t ldc, bool accumulate) {
  using V = typename S::V;
  constexpr int L = S::L;
  V acc[MB][NB];
  for (int i = 0; i < MB; ++i)
    for (int j = 0; j < NB; ++j) acc[i][j] = S::zero();
  int64_t k = 0;
  for (; k + L <= K; k += L) {
    V b[NB];
#pragma GCC unroll 4
    for (int j = 0; j < NB; ++j) b[j] = S::load(B + j * ldb + k);
#pragma GCC unroll 4
    for (int i = 0; i < MB; ++i) {
      const V a = S::load(A + i * lda + k);
#pragma GCC unroll 4
      for (int j = 0; j < NB; ++j) acc[i][j] = S::fma(a, b[j], acc[i][j]);
    }
  }
  for (int i = 0; i < MB; ++i)
    for (int j = 0; j < NB; ++j) {
      T sum = S::hsum(acc[i][j]);
      for (int64_t kk = k; kk < K; ++kk) sum += A[i * lda + kk] * B[j * ldb + kk];
      C[i * ldc + j] = accumulate ? C[i * ldc + j] + sum : sum;
    }
}

}  // namespace gr::native::gemm_detail
#endif
