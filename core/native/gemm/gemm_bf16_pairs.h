// The bfloat16 GEMM's pieces for CPUs with AVX512_BF16 (vdpbf16ps): operands packed as pairs
// of consecutive-k values, and the micro-kernel that multiplies them two k at a time. Used by
// gemm_packed.cpp's loop nest; only meaningful when GR_BF16_PAIRS is set.
#pragma once

#include "core/native/gemm/gemm_kernels.h"

#if GR_PACKED_GEMM && defined(__AVX512BF16__)
#define GR_BF16_PAIRS 1

namespace gr::native::gemm_detail {

// Note [bfloat16 pair products]
// vdpbf16ps multiplies 16 pairs of bfloat16 values and adds both products of each pair to a
// float lane: acc[j] += a[2j] b[2j] + a[2j+1] b[2j+1]. Each product of two bfloat16 values is
// exact in float, so only the additions round (in float, as the widening kernel's FMAs do),
// and the instruction does twice the multiply-adds of a float FMA per cycle: 551 against 277
// GFLOP/s on one Zen 5 core, 16 independent chains. So the operands are packed in pairs
// along k: a "pair word" holds elements k (low half) and k + 1 (high half) of one line. A
// B panel is [kc/2][NR] pair words, an A panel [kc/2][MR], and an A that is not transposed
// is read in place, a pair being one 32-bit broadcast (when K is even, so no pair runs past
// a row). An odd kc ends with a half pair whose high half is zero in both operands. The
// instruction treats subnormal inputs and results as zero, which float accumulation of
// bfloat16 products would otherwise keep; gradring's tests and training see no difference.
using Pair = uint32_t;

inline Pair pair_at(const BFloat16* line, int64_t k, int64_t ks, int64_t kc) {
  const uint32_t lo = line[k * ks].bits, hi = k + 1 < kc ? line[(k + 1) * ks].bits : 0;
  return lo | hi << 16;
}

// d[0, R) = pairs of s0[i] (low) and s1[i] (high) for i < n, zero past n (and a zero high
// half without s1: the last pair of an odd kc).
template <int R>
void interleave_rows(Pair* __restrict d, const BFloat16* s0, const BFloat16* s1, int64_t n) {
#pragma GCC unroll 4
  for (int i = 0; i < R; i += 16) {
    const int64_t valid = std::clamp<int64_t>(n - i, 0, 16);
    const __mmask16 m = static_cast<__mmask16>((1u << valid) - 1);
    const __m512i lo = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, s0 + i));
    const __m512i hi = s1 ? _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, s1 + i)), 16)
                          : _mm512_setzero_si512();
    const __m512i w = _mm512_or_si512(lo, hi);
    if constexpr (R % 16 == 0) _mm512_storeu_si512(d + i, w);
    else _mm512_mask_storeu_epi32(d + i, static_cast<__mmask16>((1u << std::min(16, R - i)) - 1), w);
  }
}

// Packs `width` lines of kc elements into panels of R lines of pair words: the panel of lines
// [p, p + R) (p a multiple of R) at dst + p * kp holds (line p + r, elements 2q, 2q + 1) at
// [q * R + r], kp = ceil(kc / 2), zero past `width`. Element (line r, k) is src[r * rs + k * ks].
template <int R>
void pack_pairs(Pair* __restrict dst, const BFloat16* __restrict src, int64_t rs, int64_t ks, int64_t width,
                int64_t kc) {
  const int64_t kp = (kc + 1) / 2;
  if (rs == 1) {
    // The k-rows run across lines (B not transposed, A transposed): interleave rows 2q and 2q + 1.
    // Rows 8 ahead are prefetched: these are activations and gradients last touched long
    // before (a weight gradient's X and dY), and a transposed A reads only a piece of each of
    // its rows, which the hardware prefetcher does not follow (train_gpt tiny --dtype bf16,
    // 1 thread, alternating runs: 44.2-46.7k -> 46.6-47.1k tokens/s; 4 or 16 ahead: the same).
    for (int64_t q = 0; q < kp; ++q) {
      const BFloat16* s0 = src + 2 * q * ks;
      const BFloat16* s1 = 2 * q + 1 < kc ? s0 + ks : nullptr;
      if (2 * q + 9 < kc)
        for (int64_t p = 0; p < width; p += 32) {
          _mm_prefetch(reinterpret_cast<const char*>(s0 + 8 * ks + p), _MM_HINT_T0);
          _mm_prefetch(reinterpret_cast<const char*>(s0 + 9 * ks + p), _MM_HINT_T0);
        }
      for (int64_t p = 0; p < width; p += R)
        interleave_rows<R>(dst + p * kp + q * R, s0 + p, s1 ? s1 + p : nullptr, width - p);
    }
    return;
  }
  // Lines run along k (A not transposed, B transposed): a line's pairs are consecutive words,
  // so whole panels are 8 x 8 transposes of words (moved as floats: bits are kept).
  for (int64_t p = 0; p < width; p += R) {
    const int64_t n = std::min<int64_t>(R, width - p);
    Pair* d = dst + p * kp;
    const BFloat16* s = src + p * rs;
    int64_t q = 0;
    if constexpr (R % 8 == 0)
      if (ks == 1 && n == R && rs % 2 == 0)
        for (; 2 * q + 16 <= kc; q += 8)
          for (int g = 0; g < R; g += 8)
            transpose8x8(reinterpret_cast<float*>(d + q * R + g), R,
                         reinterpret_cast<const float*>(s + g * rs + 2 * q), rs / 2);
    for (; q < kp; ++q)
      for (int r = 0; r < R; ++r) d[q * R + r] = r < n ? pair_at(s + r * rs, 2 * q, ks, kc) : 0;
  }
}

// c[MR x NR] = alpha * A x B + beta * c (+ bias; store_tile) over kp pair steps. A: MR rows
// read in place (kRows: the pair of row r at ar + r * lda + 2q) or a packed panel ap; b: a
// packed [kp][NR] panel. Tl is the float tile whose shape and epilogue this shares.
template <class Tl, bool kRows, class CT>
void pair_kernel(int64_t kp, const BFloat16* __restrict ar, int64_t lda, const Pair* __restrict ap,
                 const Pair* __restrict b, CT* __restrict c, int64_t ldc, float alpha, float beta,
                 const float* __restrict bias) {
  constexpr int MR = Tl::MR, NV = Tl::NV;
  __m512 acc[MR][NV];
#pragma GCC unroll 32
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_setzero_ps();
#pragma GCC unroll 2
  for (int64_t q = 0; q < kp; ++q) {
    __m512bh bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) bv[v] = (__m512bh)_mm512_loadu_si512(b + v * 16);
#pragma GCC unroll 32
    for (int r = 0; r < MR; ++r) {
      Pair w;
      if constexpr (kRows) std::memcpy(&w, ar + r * lda + 2 * q, sizeof(w));
      else w = ap[r];
      const __m512bh av = (__m512bh)_mm512_set1_epi32(static_cast<int>(w));
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_dpbf16_ps(acc[r][v], av, bv[v]);
    }
    if constexpr (!kRows) ap += MR;
    b += NV * 16;
  }
  store_tile<Tl>(acc, c, ldc, alpha, beta, bias);
}

}  // namespace gr::native::gemm_detail
#endif
