// The CPU attention's bfloat16 tiles on AVX512_BF16 (Note [Attention tile policies]): the
// forward and backward products multiply pairs of bfloat16 values with vdpbf16ps (Note
// [bfloat16 pair products]) into float tiles. Only meaningful when GR_BF16_PAIRS is set.
#pragma once

#include <vector>

#include "core/factory.h"
#include "core/native/attention/attention_tiles.h"
#include "core/native/gemm/gemm_bf16_pairs.h"

#if GR_BF16_PAIRS
namespace gr::native::attention_detail {

using gemm_detail::Pair;

// C[M, N] (+)= A B over Kw pair words: A(r, w) = a[r * ar + w * aw] (a rows in place, or a
// transposed block), row w of B at b + w * ldb. N is a multiple of kNR<float>; M and Kw any
// (a partial block of rows reads its last row again, as tile_gemm).
inline void pair_tile_gemm(int64_t M, int64_t N, int64_t Kw, const Pair* a, int64_t ar, int64_t aw, const Pair* b,
                           int64_t ldb, float* c, int64_t ldc, bool accumulate) {
  constexpr int L = 16;
  for (int64_t j = 0; j < N; j += kNR<float>)
    for (int64_t i = 0; i < M; i += kMR) {
      const int64_t mr = std::min<int64_t>(kMR, M - i);
      int64_t row[kMR];
#pragma GCC unroll 16
      for (int r = 0; r < kMR; ++r) row[r] = std::min<int64_t>(r, mr - 1) * ar;
      __m512 acc[kMR][kNV];
#pragma GCC unroll 16
      for (int r = 0; r < kMR; ++r)
#pragma GCC unroll 4
        for (int v = 0; v < kNV; ++v) acc[r][v] = _mm512_setzero_ps();
      const Pair* ap = a + i * ar;
      const Pair* bp = b + j;
      for (int64_t w = 0; w < Kw; ++w) {
        __m512bh bv[kNV];
#pragma GCC unroll 4
        for (int v = 0; v < kNV; ++v) bv[v] = (__m512bh)_mm512_loadu_si512(bp + w * ldb + v * L);
#pragma GCC unroll 16
        for (int r = 0; r < kMR; ++r) {
          const __m512bh av = (__m512bh)_mm512_set1_epi32(static_cast<int>(ap[row[r] + w * aw]));
#pragma GCC unroll 4
          for (int v = 0; v < kNV; ++v) acc[r][v] = _mm512_dpbf16_ps(acc[r][v], av, bv[v]);
        }
      }
      float* cp = c + i * ldc + j;
#pragma GCC unroll 16
      for (int r = 0; r < kMR; ++r) {
        if (r >= mr) break;
#pragma GCC unroll 4
        for (int v = 0; v < kNV; ++v) {
          float* x = cp + r * ldc + v * L;
          _mm512_storeu_ps(x, accumulate ? _mm512_add_ps(_mm512_loadu_ps(x), acc[r][v]) : acc[r][v]);
        }
      }
    }
}

// dst[q * ld + c] = the pair (row(2q)[c], row(2q + 1)[c]) for q < ceil(n / 2), c < cols; zero
// for c in [cols, width) and for the missing row 2q + 1 = n. width: a multiple of 16.
template <class Row>
void interleave_row_pairs(Pair* dst, int64_t ld, int64_t n, int64_t cols, int64_t width, const Row& row) {
  for (int64_t q = 0; 2 * q < n; ++q) {
    const BFloat16* r0 = row(2 * q);
    const BFloat16* r1 = 2 * q + 1 < n ? row(2 * q + 1) : nullptr;
    for (int64_t c = 0; c < width; c += 16)
      gemm_detail::interleave_rows<16>(dst + q * ld + c, r0 + c, r1 ? r1 + c : nullptr, cols - c);
  }
}

// dst[w * ld + j] = word w (elements 2w, 2w + 1) of row j for j < n, w < words; zero for j
// in [n, width). Rows rs elements apart (rs even): the words moved as floats, bits kept.
inline void transpose_row_words(Pair* dst, int64_t ld, int64_t width, int64_t n, int64_t words, const BFloat16* src,
                                int64_t rs) {
  transpose_rows(reinterpret_cast<float*>(dst), ld, width, n, words, reinterpret_cast<const float*>(src), rs / 2);
}

// dst rows = src rows rounded to bfloat16 (n rows of w values, w a multiple of 16; strides ld).
inline void round_rows(BFloat16* dst, const float* src, int64_t ld, int64_t n, int64_t w) {
  for (int64_t r = 0; r < n; ++r)
    for (int64_t j = 0; j < w; j += 16) gemm_detail::store_rounded(dst + r * ld + j, _mm512_loadu_ps(src + r * ld + j));
}

// Whether the pair tiles can read every operand: even widths (whole pairs per row) and even
// row strides (the rows' words are whole).
inline bool pair_tiles_apply(const AttentionParams& p) {
  return p.E % 2 == 0 && p.Ev % 2 == 0 && p.q_at.row_stride % 2 == 0 && p.k_at.row_stride % 2 == 0 &&
         p.v_at.row_stride % 2 == 0 && p.grad_out_at.row_stride % 2 == 0;
}

// The forward's products on pairs. Per batch entry: K^T as words [E/2, Sp] and V in key
// pairs [ceil(S/2), Evp]; Q is read in place; P is rounded to bfloat16 before P V.
struct PairForward {
  const AttentionParams& p;
  const BFloat16* q;
  const BFloat16 *k, *v;
  int64_t Sp, Evp, Ew;  // Ew: Q K^T's inner words
  float scale;
  std::vector<Pair> kt_buf, v_buf;
  struct Scratch {
    std::vector<BFloat16> pb;  // the weights, rounded
  };
  PairForward(const AttentionParams& p_, const BFloat16* q_, const BFloat16* k_, const BFloat16* v_)
      : p(p_), q(q_), k(k_), v(v_), Sp(round_up(p.S, kCw<float>)), Evp(round_up(p.Ev, kNR<float>)), Ew(p.E / 2),
        scale(static_cast<float>(p.scale)), kt_buf(p.B * Ew * Sp), v_buf(p.B * (Sp / 2) * Evp) {}
  const Pair* kt(int64_t b) const { return kt_buf.data() + b * Ew * Sp; }
  const Pair* vp(int64_t b) const { return v_buf.data() + b * (Sp / 2) * Evp; }
  void prepare(int64_t b) {
    transpose_row_words(kt_buf.data() + b * Ew * Sp, Sp, Sp, p.S, Ew, k + p.k_at.at(b, 0), p.k_at.row_stride);
    interleave_row_pairs(v_buf.data() + b * (Sp / 2) * Evp, Evp, p.S, p.Ev, Evp,
                         [&](int64_t j) { return v + p.v_at.at(b, j); });
  }
  Scratch scratch(int64_t br) const { return {std::vector<BFloat16>(br * kBcMax)}; }
  void begin_block(Scratch&, int64_t, int64_t, int64_t) const {}
  void scores(Scratch&, int64_t b, int64_t i0, int64_t nr, const KeyTile& t, float* s) const {
    pair_tile_gemm(nr, t.w, Ew, reinterpret_cast<const Pair*>(q + p.q_at.at(b, i0)), p.q_at.row_stride / 2, 1,
                   kt(b) + t.j0, Sp, s, kBcMax, false);
    for (int64_t r = 0; r < nr; ++r)
      for (int64_t j = 0; j < t.w; ++j) s[r * kBcMax + j] *= scale;
  }
  // Columns past t.nc hold zero weights (masked), and V's pair rows past S are zero.
  void add_pv(Scratch& sc, int64_t b, int64_t nr, const KeyTile& t, const float* s, float* o) const {
    round_rows(sc.pb.data(), s, kBcMax, nr, t.w);
    pair_tile_gemm(nr, Evp, (t.nc + 1) / 2, reinterpret_cast<const Pair*>(sc.pb.data()), kBcMax / 2, 1,
                   vp(b) + t.j0 / 2 * Evp, Evp, o, Evp, true);
  }
};

// The backward's products on pairs, one batch entry at a time per thread: K^T and V^T as
// words, K, Q and dO in pairs of rows; Q and dO also read in place. P and dS are rounded
// to bfloat16, and interleaved by pairs of queries for the products that take them
// transposed.
struct PairBackward {
  const AttentionParams& p;
  const BFloat16 *q, *k, *v, *go;
  int64_t Sp, Ep, Evp, Ew, Evw;
  float scale, dk_scale;  // dK comes from the unscaled Q
  std::vector<Pair> kt, kp, qp, vt, dop, pt;  // pt: a tile's P or dS by pairs of queries
  std::vector<BFloat16> rb;                   // a tile's P or dS rounded
  PairBackward(const AttentionParams& p_, const BFloat16* q_, const BFloat16* k_, const BFloat16* v_,
               const BFloat16* go_)
      : p(p_), q(q_), k(k_), v(v_), go(go_), Sp(round_up(p.S, kCw<float>)), Ep(round_up(p.E, kNR<float>)),
        Evp(round_up(p.Ev, kNR<float>)), Ew(p.E / 2), Evw(p.Ev / 2), scale(static_cast<float>(p.scale)),
        dk_scale(scale), kt(Ew * Sp), kp((Sp / 2) * Ep), qp((p.L + 1) / 2 * Ep), vt(Evw * Sp),
        dop((p.L + 1) / 2 * Evp), pt(kBcMax / 2 * kBcMax), rb(kBcMax * kBcMax) {}
  void begin_entry(int64_t b) {
    auto k_row = [&](int64_t j) { return k + p.k_at.at(b, j); };
    transpose_row_words(kt.data(), Sp, Sp, p.S, Ew, k_row(0), p.k_at.row_stride);
    transpose_row_words(vt.data(), Sp, Sp, p.S, Evw, v + p.v_at.at(b, 0), p.v_at.row_stride);
    interleave_row_pairs(kp.data(), Ep, p.S, p.E, Ep, k_row);
    interleave_row_pairs(qp.data(), Ep, p.L, p.E, Ep, [&](int64_t i) { return q + p.q_at.at(b, i); });
    interleave_row_pairs(dop.data(), Evp, p.L, p.Ev, Evp, [&](int64_t i) { return go + p.grad_out_at.at(b, i); });
    b_ = b;
  }
  void scores(int64_t i0, int64_t nr, const KeyTile& t, float* s) const {
    pair_tile_gemm(nr, t.w, Ew, reinterpret_cast<const Pair*>(q + p.q_at.at(b_, i0)), p.q_at.row_stride / 2, 1,
                   kt.data() + t.j0, Sp, s, kBcMax, false);
    for (int64_t r = 0; r < nr; ++r)
      for (int64_t j = 0; j < t.w; ++j) s[r * kBcMax + j] *= scale;
  }
  // The tile's rows x (nr of them), rounded, interleaved by pairs of rows: pt[qi * kBcMax + j].
  void pairs_of_rows(int64_t nr, const KeyTile& t, const float* x) {
    round_rows(rb.data(), x, kBcMax, nr, t.w);
    interleave_row_pairs(pt.data(), kBcMax, nr, t.w, t.w, [&](int64_t r) { return rb.data() + r * kBcMax; });
  }
  void add_dv(int64_t i0, int64_t nr, const KeyTile& t, const float* pz, float* dva) {
    pairs_of_rows(nr, t, pz);
    pair_tile_gemm(t.nc, Evp, (nr + 1) / 2, pt.data(), 1, kBcMax, dop.data() + i0 / 2 * Evp, Evp, dva + t.j0 * Evp,
                   Evp, true);
  }
  void dp(int64_t i0, int64_t nr, const KeyTile& t, float* dP) const {
    pair_tile_gemm(nr, t.w, Evw, reinterpret_cast<const Pair*>(go + p.grad_out_at.at(b_, i0)),
                   p.grad_out_at.row_stride / 2, 1, vt.data() + t.j0, Sp, dP, kBcMax, false);
  }
  // dS's columns past t.nc are zero (zero weights).
  void add_dq_dk(int64_t i0, int64_t nr, const KeyTile& t, const float* ds, float* dqa, float* dka) {
    pairs_of_rows(nr, t, ds);  // rb: dS rounded; pt: by pairs of queries
    pair_tile_gemm(nr, Ep, (t.nc + 1) / 2, reinterpret_cast<const Pair*>(rb.data()), kBcMax / 2, 1,
                   kp.data() + t.j0 / 2 * Ep, Ep, dqa + i0 * Ep, Ep, true);
    pair_tile_gemm(t.nc, Ep, (nr + 1) / 2, pt.data(), 1, kBcMax, qp.data() + i0 / 2 * Ep, Ep, dka + t.j0 * Ep, Ep,
                   true);
  }

 private:
  int64_t b_ = 0;
};

}  // namespace gr::native::attention_detail
#endif
