// The CPU attention's tile machinery, shared by its float tiles (attention_cpu.cpp) and its
// bfloat16 pair tiles (attention_pairs.h): the tile sizes (Note [Attention tiles]), the
// register-tile product, the row operations of the online softmax, masking, dropout, and the
// copies that lay operands out for the products. See core/native/attention.h.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "core/functors_fast_math.h"
#include "core/native/attention.h"
#include "core/native/attention_flash.h"
#include "core/native/gemm_kernels.h"

namespace gr::native::attention_detail {

#if GR_PACKED_GEMM
template <class T>
using Vec = typename gemm_detail::VecOf<T>::S;
constexpr int kMR = gemm_detail::kTallMR, kNV = gemm_detail::kTallNV;
#else
template <class T>
struct Vec {  // no vector ISA: one-lane "vectors", the same loops
  using V = T;
  static constexpr int L = 1;
  static V load(const T* p) { return *p; }
  static void store(T* p, V v) { *p = v; }
  static V set1(T x) { return x; }
  static V zero() { return T(0); }
  static V fma(V a, V b, V c) { return a * b + c; }
  static V add(V a, V b) { return a + b; }
};
constexpr int kMR = 4, kNV = 4;
#endif
template <class T>
constexpr int64_t kNR = kNV * Vec<T>::L;
// Note [Attention tiles]
// A block of br queries meets the keys in tiles of up to kBcMax: br x w scores, where w is
// the tile's keys rounded up to kCw (a multiple of the register tile's columns and of the
// 8 lanes of the row loops), so a short or causal sequence computes little beyond its
// visible keys (T = 64 causal: 2944 scores of the 2080 visible, against 9216 with fixed
// 48 x 96 tiles). Products run on whole register columns; their rows (queries, or keys for
// the transposed products) and their inner dimension take any length. Padding columns of a
// tile are masked to -inf, so their weights are 0.
constexpr int64_t kBcMax = 96;
template <class T>
constexpr int64_t kCw = std::max<int64_t>(kNR<T>, 8);
// Queries per block: fewer for short sequences (less causal waste past the diagonal).
inline int64_t query_block(int64_t L) { return L <= 128 ? 24 : 48; }

inline int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

// C[M, N] (+)= A B with A(r, k) = a[r * ar + k * ak] (rows read in place, or a transposed
// matrix), row k of B at b + k * ldb. N is a multiple of kNR<T>; M and K are any. A partial
// block of rows reads its last row again for the missing ones and stores only its own.
template <class T>
void tile_gemm(int64_t M, int64_t N, int64_t K, const T* a, int64_t ar, int64_t ak, const T* b, int64_t ldb, T* c,
               int64_t ldc, bool accumulate) {
  using S = Vec<T>;
  using V = typename S::V;
  constexpr int L = S::L;
  for (int64_t j = 0; j < N; j += kNR<T>)
    for (int64_t i = 0; i < M; i += kMR) {
      const int64_t mr = std::min<int64_t>(kMR, M - i);
      int64_t row[kMR];
#pragma GCC unroll 16
      for (int r = 0; r < kMR; ++r) row[r] = std::min<int64_t>(r, mr - 1) * ar;
      V acc[kMR][kNV];
#pragma GCC unroll 16
      for (int r = 0; r < kMR; ++r)
#pragma GCC unroll 4
        for (int v = 0; v < kNV; ++v) acc[r][v] = S::zero();
      const T* ap = a + i * ar;
      const T* bp = b + j;
      for (int64_t k = 0; k < K; ++k) {
        V bv[kNV];
#pragma GCC unroll 4
        for (int v = 0; v < kNV; ++v) bv[v] = S::load(bp + k * ldb + v * L);
#pragma GCC unroll 16
        for (int r = 0; r < kMR; ++r) {
          const V av = S::set1(ap[row[r] + k * ak]);
#pragma GCC unroll 4
          for (int v = 0; v < kNV; ++v) acc[r][v] = S::fma(av, bv[v], acc[r][v]);
        }
      }
      T* cp = c + i * ldc + j;
#pragma GCC unroll 16
      for (int r = 0; r < kMR; ++r) {
        if (r >= mr) break;
#pragma GCC unroll 4
        for (int v = 0; v < kNV; ++v)
          S::store(cp + r * ldc + v * L, accumulate ? S::add(S::load(cp + r * ldc + v * L), acc[r][v]) : acc[r][v]);
      }
    }
}

// exp of the weights: float's is vectorisable, See Note [Vectorisable exp and erf].
using math::fast_exp;

// Row max and sum over n values (a multiple of 8) in 8 independent lanes, so GCC vectorises
// them (one running value would be a serial chain: float addition does not reassociate).
template <class T>
T row_max(const T* x, int64_t n) {
  T m[8];
  for (int u = 0; u < 8; ++u) m[u] = attention_neg_inf<T>();
  for (int64_t j = 0; j < n; j += 8)
    for (int u = 0; u < 8; ++u) m[u] = x[j + u] > m[u] ? x[j + u] : m[u];
  T r = m[0];
  for (int u = 1; u < 8; ++u) r = m[u] > r ? m[u] : r;
  return r;
}
template <class T>
T row_sum(const T* x, int64_t n) {
  T s[8] = {};
  for (int64_t j = 0; j < n; j += 8)
    for (int u = 0; u < 8; ++u) s[u] += x[j + u];
  return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}
// sum of a[j] * b[j] over j < n in 8 lanes, as row_sum (one running sum was a serial chain
// of n FMAs per row; bench_attention --T 64 --B 12 --H 4 --D 32, forward and backward:
// 0.596-0.602 -> 0.584-0.595 ms).
template <class T, class A, class B>
T row_dot(const A* a, const B* b, int64_t n) {
  T s[8] = {};
  int64_t j = 0;
  for (; j + 8 <= n; j += 8)
    for (int u = 0; u < 8; ++u) s[u] += static_cast<T>(a[j + u]) * static_cast<T>(b[j + u]);
  for (int u = 0; j < n; ++j, ++u) s[u] += static_cast<T>(a[j]) * static_cast<T>(b[j]);
  return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}
// row[0, n) = exp(row - shift).
template <class T>
void row_exp(T* __restrict row, int64_t n, T shift) {
  for (int64_t j = 0; j < n; ++j) row[j] = fast_exp(row[j] - shift);
}

// row[0, n) *= the dropout factors of weights (b, i, j0 ..): one Philox block per 4 weights.
// The same stream as attention_dropout_factor (Note [Attention dropout pairs]).
template <class T>
void apply_dropout_row(const AttentionParams& p, int64_t b, int64_t i, int64_t j0, int64_t n, T* row) {
  AttentionDropoutRow flags(p, b, i);
  const T scale = static_cast<T>(p.dropout_scale);
  for (int64_t jj = 0; jj < n; ++jj) row[jj] *= flags.factor(j0 + jj, scale);
}

// One key tile of a query block: keys [j0, j0 + nc) are real (and may be visible), the
// tile's w >= nc columns are what the products compute.
struct KeyTile {
  int64_t j0, nc, w;
};
template <class T>
KeyTile key_tile(int64_t j0, int64_t kend) {
  const int64_t nc = std::min(kBcMax, kend - j0);
  return {j0, nc, round_up(nc, kCw<T>)};
}

// Masks tile row (b, i) in place: of its t.w columns the first t.nc are keys, the rest -inf.
// A float mask holds I values.
template <class T, class I>
void mask_row(const AttentionParams& p, const void* mask, int64_t b, int64_t i, const KeyTile& t, T* row) {
  if (p.mask == AttentionMask::None) {  // causal or past the tile's keys only: a tail of -inf
    const int64_t visible = p.causal ? std::clamp<int64_t>(i - t.j0 + 1, 0, t.nc) : t.nc;
    for (int64_t jj = visible; jj < t.w; ++jj) row[jj] = attention_neg_inf<T>();
    return;
  }
  for (int64_t jj = 0; jj < t.nc; ++jj) row[jj] = attention_masked_score<T, I>(p, row[jj], mask, b, i, t.j0 + jj);
  for (int64_t jj = t.nc; jj < t.w; ++jj) row[jj] = attention_neg_inf<T>();
}

// A tile needs masking when a mask is given, it has padding columns, or (causal) a key j of
// the tile lies beyond its first query i0 (attention_tile_masked).
inline bool tile_needs_mask(const AttentionParams& p, int64_t i0, const KeyTile& t) {
  return attention_tile_masked(p, i0, t.j0, t.nc, t.w);
}

// Keys a block of queries [i0, i0 + nr) sees: all S, or (causal) those up to its last query.
inline int64_t key_end(const AttentionParams& p, int64_t i0, int64_t nr) { return attention_key_end(p, i0, nr); }

// dst[c * ld + j] = src[j * rs + c] for j < n, c < cols, zeros for j in [n, width): the
// transpose of n rows rs apart into a [cols, width] block, the tiles' B operand (bfloat16
// sources widened to float). float goes through 8x8 register transposes (element by element,
// the scattered stores took a quarter of the backward's own time at T = 64).
template <class T, class I>
void transpose_rows(T* dst, int64_t ld, int64_t width, int64_t n, int64_t cols, const I* src, int64_t rs) {
  int64_t j0 = 0, c8 = 0;
#if GR_PACKED_GEMM
  if constexpr (std::is_same_v<T, float>) {
    c8 = cols / 8 * 8;
    for (; j0 + 8 <= n; j0 += 8)
      for (int64_t c = 0; c < c8; c += 8) gemm_detail::transpose8x8(dst + c * ld + j0, ld, src + j0 * rs + c, rs);
    for (int64_t j = 0; j < j0; ++j)  // the columns past the last whole 8
      for (int64_t c = c8; c < cols; ++c) dst[c * ld + j] = static_cast<T>(src[j * rs + c]);
  }
#endif
  for (int64_t j = j0; j < n; ++j)
    for (int64_t c = 0; c < cols; ++c) dst[c * ld + j] = static_cast<T>(src[j * rs + c]);
  for (int64_t c = 0; c < cols; ++c) std::fill(dst + c * ld + n, dst + c * ld + width, T(0));
}
// dst[j * ld + c] = factor * rows[j][c] for j < n, c < cols, zero columns up to ld.
template <class T, class Row>
void copy_rows(T* dst, int64_t ld, int64_t n, int64_t cols, const Row& row, T factor = T(1)) {
  for (int64_t j = 0; j < n; ++j) {
    const auto* src = row(j);
    T* d = dst + j * ld;
    for (int64_t c = 0; c < cols; ++c) d[c] = static_cast<T>(src[c]) * factor;
    std::fill(d + cols, d + ld, T(0));
  }
}

}  // namespace gr::native::attention_detail
