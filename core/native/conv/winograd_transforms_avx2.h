// The Winograd F(2x2, 3x3) tile transforms of winograd_transforms.h for float on AVX2 builds
// without AVX-512 (included at its end). 8 lanes hold 4 neighbouring tiles of tile row th
// (lanes 0-3) and the same 4 of tile row th + 1 (lanes 4-7): every 128-bit half is one tile
// row, so the in-lane shuffles (even / odd columns, interleaving) serve both rows at once, and
// each half is stored at its own row's tiles. The scalar versions ran about as long as the
// GEMMs they feed (8x8 and 4x4 maps of ResNet-18 at 32x32 input).
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <vector>

namespace gr::native::winograd {

namespace avx2 {

// Lanes [0, n) of a 4-lane mask.
inline __m128i mask4(int64_t n) {
  return _mm_cmpgt_epi32(_mm_set1_epi32(static_cast<int>(std::clamp<int64_t>(n, 0, 4))), _mm_setr_epi32(0, 1, 2, 3));
}
inline __m256 join(__m128 lo, __m128 hi) { return _mm256_insertf128_ps(_mm256_castps128_ps256(lo), hi, 1); }
inline __m128 lower(__m256 v) { return _mm256_castps256_ps128(v); }
inline __m128 upper(__m256 v) { return _mm256_extractf128_ps(v, 1); }
inline __m256 load2(const float* lo, const float* hi) { return join(_mm_loadu_ps(lo), _mm_loadu_ps(hi)); }
// Columns 0, 2, 4, 6 / 1, 3, 5, 7 of the 8 columns in a (0-3) and b (4-7), per half.
inline __m256 even(__m256 a, __m256 b) { return _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)); }
inline __m256 odd(__m256 a, __m256 b) { return _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1)); }
inline __m256 neg(__m256 a) { return _mm256_sub_ps(_mm256_setzero_ps(), a); }

// The tiles [tw0, tw0 + 4) of tile rows th and th + 1: where their entries sit in a plain
// [xi][t] matrix, and how many of each row exist.
struct Pair {
  int64_t t_lo, t_hi, n_lo, n_hi;
  __m128i m_lo, m_hi;
  Pair(const Geo& g, int64_t th, int64_t tw0)
      : t_lo(th * g.TW + tw0), t_hi(t_lo + g.TW), n_lo(std::min<int64_t>(4, g.TW - tw0)),
        n_hi(th + 1 < g.TH ? n_lo : 0), m_lo(mask4(n_lo)), m_hi(mask4(n_hi)) {}
  // The 8 entries of matrix row p (zero for missing tiles).
  __m256 load(const float* p) const {
    return join(n_lo == 4 ? _mm_loadu_ps(p + t_lo) : _mm_maskload_ps(p + t_lo, m_lo),
                n_hi == 4 ? _mm_loadu_ps(p + t_hi) : _mm_maskload_ps(p + t_hi, m_hi));
  }
  void store(float* p, __m256 v) const {
    if (n_lo == 4) _mm_storeu_ps(p + t_lo, lower(v));
    else _mm_maskstore_ps(p + t_lo, m_lo, lower(v));
    if (n_hi == 4) _mm_storeu_ps(p + t_hi, upper(v));
    else if (n_hi > 0) _mm_maskstore_ps(p + t_hi, m_hi, upper(v));
  }
};

// Columns [c, c + 4) of a plane row that has n columns: a mask for a 4-lane store.
inline __m128i cols4(int64_t c, int64_t n) { return mask4(n - c); }

}  // namespace avx2

template <class Out>
void input_transform(const float* plane, const Geo& g, const Out& out, float* buf) {
  using namespace avx2;
  float* r[6];  // padded input rows 2 th - ph + k (load_row)
  for (int k = 0; k < 6; ++k) r[k] = buf + k * g.Ub;
  for (int64_t th = 0; th < g.TH; th += 2) {
    for (int k = 0; k < 6; ++k) load_row(plane, g, 2 * th - g.ph + k, r[k]);
    for (int64_t tw0 = 0; tw0 < g.TW; tw0 += 4) {
      const Pair pr(g, th, tw0);
      const int64_t c = 2 * tw0;
      __m256 h[4][4];  // h[j][b]: column combination b of patch row j (lanes: tile row th | th + 1)
      for (int j = 0; j < 4; ++j) {
        const float *lo = r[j] + c, *hi = r[j + 2] + c;
        const __m256 a0 = load2(lo, hi), a4 = load2(lo + 4, hi + 4), a2 = load2(lo + 2, hi + 2),
                     a6 = load2(lo + 6, hi + 6);
        const __m256 e = even(a0, a4), o = odd(a0, a4), e2 = even(a2, a6), o2 = odd(a2, a6);
        h[j][0] = _mm256_sub_ps(e, e2), h[j][1] = _mm256_add_ps(o, e2);
        h[j][2] = _mm256_sub_ps(e2, o), h[j][3] = _mm256_sub_ps(o, o2);
      }
      for (int b = 0; b < 4; ++b) {
        pr.store(out.at(b, 0), _mm256_sub_ps(h[0][b], h[2][b]));
        pr.store(out.at(4 + b, 0), _mm256_add_ps(h[1][b], h[2][b]));
        pr.store(out.at(8 + b, 0), _mm256_sub_ps(h[2][b], h[1][b]));
        pr.store(out.at(12 + b, 0), _mm256_sub_ps(h[1][b], h[3][b]));
      }
    }
  }
}

template <class Out>
void output_adjoint(const float* plane, const Geo& g, const Out& out, float* buf) {
  using namespace avx2;
  const int64_t width = (g.TW + 3) / 4 * 8;  // columns the tile groups read
  float* r[4];  // gradient rows 2 th + k, zero past the plane
  for (int k = 0; k < 4; ++k) r[k] = buf + k * g.Ub;
  for (int64_t th = 0; th < g.TH; th += 2) {
    for (int k = 0; k < 4; ++k) {
      const int64_t h = 2 * th + k;
      std::fill(r[k], r[k] + width, 0.f);
      if (h < g.Ho) std::copy(plane + h * g.Wo, plane + (h + 1) * g.Wo, r[k]);
    }
    for (int64_t tw0 = 0; tw0 < g.TW; tw0 += 4) {
      const Pair pr(g, th, tw0);
      const int64_t c = 2 * tw0;
      const __m256 a0 = load2(r[0] + c, r[2] + c), a4 = load2(r[0] + c + 4, r[2] + c + 4);
      const __m256 b0 = load2(r[1] + c, r[3] + c), b4 = load2(r[1] + c + 4, r[3] + c + 4);
      const __m256 g00 = even(a0, a4), g01 = odd(a0, a4), g10 = even(b0, b4), g11 = odd(b0, b4);
      const __m256 q[4][2] = {{g00, g01},
                              {_mm256_add_ps(g00, g10), _mm256_add_ps(g01, g11)},
                              {_mm256_sub_ps(g00, g10), _mm256_sub_ps(g01, g11)},
                              {neg(g10), neg(g11)}};
      for (int a = 0; a < 4; ++a) {
        pr.store(out.at(4 * a, 0), q[a][0]);
        pr.store(out.at(4 * a + 1, 0), _mm256_add_ps(q[a][0], q[a][1]));
        pr.store(out.at(4 * a + 2, 0), _mm256_sub_ps(q[a][0], q[a][1]));
        pr.store(out.at(4 * a + 3, 0), neg(q[a][1]));
      }
    }
  }
}

template <>
inline void output_transform<float>(const float* m, int64_t xs, const Geo& g, float bias, float* plane, float*) {
  using namespace avx2;
  const __m256 vb = _mm256_set1_ps(bias);
  for (int64_t th = 0; th < g.TH; th += 2) {
    for (int64_t tw0 = 0; tw0 < g.TW; tw0 += 4) {
      const Pair pr(g, th, tw0);
      __m256 s0[4], s1[4];
      for (int b = 0; b < 4; ++b) {
        const __m256 m0 = pr.load(m + b * xs), m1 = pr.load(m + (4 + b) * xs), m2 = pr.load(m + (8 + b) * xs),
                     m3 = pr.load(m + (12 + b) * xs);
        s0[b] = _mm256_add_ps(_mm256_add_ps(m0, m1), m2), s1[b] = _mm256_sub_ps(_mm256_sub_ps(m1, m2), m3);
      }
      const __m256 y00 = _mm256_add_ps(_mm256_add_ps(s0[0], s0[1]), s0[2]);
      const __m256 y01 = _mm256_sub_ps(_mm256_sub_ps(s0[1], s0[2]), s0[3]);
      const __m256 y10 = _mm256_add_ps(_mm256_add_ps(s1[0], s1[1]), s1[2]);
      const __m256 y11 = _mm256_sub_ps(_mm256_sub_ps(s1[1], s1[2]), s1[3]);
      // Output rows 2 th + r: columns 2 tw0 .. + 3 and + 4 .. + 7 (lower halves), rows 2 th + 2 + r (upper).
      const __m256 rows[2][2] = {{_mm256_add_ps(_mm256_unpacklo_ps(y00, y01), vb), _mm256_add_ps(_mm256_unpackhi_ps(y00, y01), vb)},
                                 {_mm256_add_ps(_mm256_unpacklo_ps(y10, y11), vb), _mm256_add_ps(_mm256_unpackhi_ps(y10, y11), vb)}};
      const int64_t c = 2 * tw0;
      const __m128i k0 = cols4(c, g.Wo), k1 = cols4(c + 4, g.Wo);
      for (int half = 0; half < 2; ++half)
        for (int r = 0; r < 2; ++r) {
          const int64_t h = 2 * (th + half) + r;
          if (h >= g.Ho) continue;
          float* row = plane + h * g.Wo + c;
          _mm_maskstore_ps(row, k0, half ? upper(rows[r][0]) : lower(rows[r][0]));
          _mm_maskstore_ps(row + 4, k1, half ? upper(rows[r][1]) : lower(rows[r][1]));
        }
    }
  }
}

// Sums the patches into a zeroed, padded copy of the plane (row h + ph, column w + pw), then
// copies its interior out: neighbouring tiles' patches overlap by two rows and columns.
template <>
inline void input_adjoint<float>(const float* dv, int64_t xs, const Geo& g, float* plane, float*) {
  using namespace avx2;
  const int64_t Wa = (g.TW + 3) / 4 * 8 + 4, Ha = (g.TH + 1) / 2 * 4 + 2;
  thread_local std::vector<float> acc_buf;
  acc_buf.assign(static_cast<size_t>(Wa * Ha), 0.f);
  float* acc = acc_buf.data();
  const __m256 zero = _mm256_setzero_ps();
  auto add4 = [](float* p, __m128 v) { _mm_storeu_ps(p, _mm_add_ps(_mm_loadu_ps(p), v)); };
  for (int64_t th = 0; th < g.TH; th += 2) {
    for (int64_t tw0 = 0; tw0 < g.TW; tw0 += 4) {
      const Pair pr(g, th, tw0);
      __m256 v[16];
      for (int xi = 0; xi < 16; ++xi) v[xi] = pr.load(dv + xi * xs);
      for (int k = 0; k < 4; ++k) {
        __m256 p[4];  // row k of B dv
        for (int b = 0; b < 4; ++b)
          p[b] = k == 0   ? v[b]
                 : k == 1 ? _mm256_add_ps(_mm256_sub_ps(v[4 + b], v[8 + b]), v[12 + b])
                 : k == 2 ? _mm256_sub_ps(_mm256_add_ps(v[4 + b], v[8 + b]), v[b])
                          : neg(v[12 + b]);
        const __m256 e0 = p[0], e1 = _mm256_add_ps(_mm256_sub_ps(p[1], p[2]), p[3]);
        const __m256 e2 = _mm256_sub_ps(_mm256_add_ps(p[1], p[2]), p[0]), e3 = neg(p[3]);
        // Tile tw gives columns 2 tw + l the value e_l: (e0, e1) interleaved over columns
        // [0, 8) of the group, (e2, e3) over [2, 10); summed into three 4-column pieces.
        const __m256 lo01 = _mm256_unpacklo_ps(e0, e1), hi01 = _mm256_unpackhi_ps(e0, e1);
        const __m256 lo23 = _mm256_unpacklo_ps(e2, e3), hi23 = _mm256_unpackhi_ps(e2, e3);
        const __m256 x0 = _mm256_add_ps(lo01, _mm256_shuffle_ps(zero, lo23, _MM_SHUFFLE(1, 0, 1, 0)));
        const __m256 x1 = _mm256_add_ps(hi01, _mm256_shuffle_ps(lo23, hi23, _MM_SHUFFLE(1, 0, 3, 2)));
        const __m256 x2 = _mm256_shuffle_ps(hi23, zero, _MM_SHUFFLE(3, 2, 3, 2));
        float* ra = acc + (2 * th + k) * Wa + 2 * tw0;  // tile row th's patch row k
        float* rb = ra + 2 * Wa;                         // tile row th + 1's
        add4(ra, lower(x0)), add4(ra + 4, lower(x1)), add4(ra + 8, lower(x2));
        add4(rb, upper(x0)), add4(rb + 4, upper(x1)), add4(rb + 8, upper(x2));
      }
    }
  }
  for (int64_t h = 0; h < g.H; ++h)
    std::copy(acc + (h + g.ph) * Wa + g.pw, acc + (h + g.ph) * Wa + g.pw + g.W, plane + h * g.W);
}

}  // namespace gr::native::winograd
