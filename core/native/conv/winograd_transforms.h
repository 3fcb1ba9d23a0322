// The tile transforms of Winograd F(2x2, 3x3) for one (image, channel) plane, and their
// adjoints (see conv2d_winograd.cpp for the algebra). Scalar templates for any T, AVX-512
// float versions that handle 16 tiles of a tile row per step in registers, and AVX2 ones
// (winograd_transforms_avx2.h) that handle 4 tiles of two tile rows.
// Transformed data is written as a plain [rows][T] matrix per xi (see PlainOut).
#pragma once

#include <algorithm>
#include <cstdint>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "core/native/conv/conv2d.h"

namespace gr::native::winograd {

// Tiling of one plane: TH x TW tiles of 2x2 outputs, covering columns [-pw, 2 TW + 2 - pw)
// of the input (U columns; row buffers are Ub long, with zero slack).
struct Geo {
  int64_t H, W, Ho, Wo, ph, pw, TH, TW, TT, U, Ub;
  explicit Geo(const Conv2dArgs& a)
      : H(a.H), W(a.W), Ho(a.H_out), Wo(a.W_out), ph(a.pad_h), pw(a.pad_w), TH((a.H_out + 1) / 2),
        TW((a.W_out + 1) / 2), TT(TH * TW), U(2 * TW + 2), Ub((TW + 15) / 16 * 32 + 32) {}
};

// Where tile t of the plane (0 .. TT) goes for position xi: base is this channel's row at
// the plane's first tile, and the 16 matrices are xs apart.
template <class T>
struct PlainOut {
  T* base;
  int64_t xs;
  T* at(int xi, int64_t t) const { return base + xi * xs + t; }
};

template <class T, class Out>
inline void put(const Out& o, int xi, int64_t t, T v) {
  *o.at(xi, t) = v;
}

// Loads input row h into buf[0, U): buf[u] = x[h][u - pw], zero outside the plane.
template <class T>
void load_row(const T* plane, const Geo& g, int64_t h, T* buf) {
  if (h < 0 || h >= g.H) {
    std::fill(buf, buf + g.U, T(0));
    return;
  }
  const int64_t lo = std::min(g.pw, g.U), hi = std::clamp<int64_t>(g.pw + g.W, lo, g.U);
  std::fill(buf, buf + lo, T(0));
  std::copy(plane + h * g.W + (lo - g.pw), plane + h * g.W + (hi - g.pw), buf + lo);
  std::fill(buf + hi, buf + g.U, T(0));
}

// V_t = B^T d_t B for every tile of an input plane. buf: 8 Ub elements.
template <class T, class Out>
void input_transform(const T* plane, const Geo& g, const Out& out, T* buf) {
  T *d0 = buf, *d1 = buf + g.Ub, *d2 = buf + 2 * g.Ub, *d3 = buf + 3 * g.Ub, *tr = buf + 4 * g.Ub;
  for (int64_t th = 0; th < g.TH; ++th) {
    const int64_t h = 2 * th - g.ph;
    load_row(plane, g, h, d0), load_row(plane, g, h + 1, d1), load_row(plane, g, h + 2, d2);
    load_row(plane, g, h + 3, d3);
    for (int64_t u = 0; u < g.U; ++u) {
      tr[u] = d0[u] - d2[u];
      tr[g.Ub + u] = d1[u] + d2[u];
      tr[2 * g.Ub + u] = d2[u] - d1[u];
      tr[3 * g.Ub + u] = d1[u] - d3[u];
    }
    for (int a = 0; a < 4; ++a) {
      const T* r = tr + a * g.Ub;
      for (int64_t tw = 0; tw < g.TW; ++tw) {
        const T c0 = r[2 * tw], c1 = r[2 * tw + 1], c2 = r[2 * tw + 2], c3 = r[2 * tw + 3];
        const int64_t t = th * g.TW + tw;
        put(out, 4 * a, t, c0 - c2), put(out, 4 * a + 1, t, c1 + c2);
        put(out, 4 * a + 2, t, c2 - c1), put(out, 4 * a + 3, t, c1 - c3);
      }
    }
  }
}

// Z_t = A gy_t A^T (the adjoint of output_transform) for every tile of an output-gradient
// plane; gy is zero past the plane's edge. buf: 2 Ub elements.
template <class T, class Out>
void output_adjoint(const T* plane, const Geo& g, const Out& out, T* buf) {
  T *r0 = buf, *r1 = buf + g.Ub;
  for (int64_t th = 0; th < g.TH; ++th) {
    const T* y0 = plane + 2 * th * g.Wo;
    std::fill(r0, r0 + 2 * g.TW, T(0)), std::fill(r1, r1 + 2 * g.TW, T(0));
    std::copy(y0, y0 + g.Wo, r0);
    if (2 * th + 1 < g.Ho) std::copy(y0 + g.Wo, y0 + 2 * g.Wo, r1);
    for (int64_t tw = 0; tw < g.TW; ++tw) {
      const T g00 = r0[2 * tw], g01 = r0[2 * tw + 1], g10 = r1[2 * tw], g11 = r1[2 * tw + 1];
      const T q[4][2] = {{g00, g01}, {g00 + g10, g01 + g11}, {g00 - g10, g01 - g11}, {-g10, -g11}};
      const int64_t t = th * g.TW + tw;
      for (int a = 0; a < 4; ++a) {
        put(out, 4 * a, t, q[a][0]), put(out, 4 * a + 1, t, q[a][0] + q[a][1]);
        put(out, 4 * a + 2, t, q[a][0] - q[a][1]), put(out, 4 * a + 3, t, -q[a][1]);
      }
    }
  }
}

// y plane = A^T m_t A + bias for every tile; m[xi * xs + t] (plain).
template <class T>
void output_transform(const T* m, int64_t xs, const Geo& g, T bias, T* plane, T* buf) {
  T *r0 = buf, *r1 = buf + g.Ub;
  for (int64_t th = 0; th < g.TH; ++th) {
    const T* s = m + th * g.TW;
    for (int64_t tw = 0; tw < g.TW; ++tw) {
      T s0[4], s1[4];
      for (int b = 0; b < 4; ++b) {
        const T m0 = s[b * xs + tw], m1 = s[(4 + b) * xs + tw], m2 = s[(8 + b) * xs + tw], m3 = s[(12 + b) * xs + tw];
        s0[b] = m0 + m1 + m2;
        s1[b] = m1 - m2 - m3;
      }
      r0[2 * tw] = s0[0] + s0[1] + s0[2];
      r0[2 * tw + 1] = s0[1] - s0[2] - s0[3];
      r1[2 * tw] = s1[0] + s1[1] + s1[2];
      r1[2 * tw + 1] = s1[1] - s1[2] - s1[3];
    }
    T* y0 = plane + 2 * th * g.Wo;
    for (int64_t w = 0; w < g.Wo; ++w) y0[w] = r0[w] + bias;
    if (2 * th + 1 < g.Ho)
      for (int64_t w = 0; w < g.Wo; ++w) y0[g.Wo + w] = r1[w] + bias;
  }
}

// The adjoint of input_transform: the gradient plane = sum_t B dv_t B^T over overlapping
// patches; dv[xi * xs + t] (plain). Rows are summed in a rolling window of four buffers and
// written (not added) once no later tile row reaches them. buf: 8 Ub elements.
template <class T>
void input_adjoint(const T* dv, int64_t xs, const Geo& g, T* plane, T* buf) {
  T* acc[4] = {buf, buf + g.Ub, buf + 2 * g.Ub, buf + 3 * g.Ub};
  T* e = buf + 4 * g.Ub;  // e[l * TW + tw]: column l of patch row k for the current tile row
  std::fill(buf, buf + 4 * g.Ub, T(0));
  auto flush = [&](int64_t h, const T* row) {
    if (h >= 0 && h < g.H) std::copy(row + g.pw, row + g.pw + g.W, plane + h * g.W);
  };
  for (int64_t th = 0; th < g.TH; ++th) {
    const T* s = dv + th * g.TW;
    for (int k = 0; k < 4; ++k) {
      for (int64_t tw = 0; tw < g.TW; ++tw) {
        T p[4];  // row k of B dv
        for (int b = 0; b < 4; ++b) {
          const T v0 = s[b * xs + tw], v1 = s[(4 + b) * xs + tw], v2 = s[(8 + b) * xs + tw],
                  v3 = s[(12 + b) * xs + tw];
          p[b] = k == 0 ? v0 : k == 1 ? v1 - v2 + v3 : k == 2 ? v1 + v2 - v0 : -v3;
        }
        e[tw] = p[0];
        e[g.TW + tw] = p[1] - p[2] + p[3];
        e[2 * g.TW + tw] = p[1] + p[2] - p[0];
        e[3 * g.TW + tw] = -p[3];
      }
      T* r = acc[k];
      for (int64_t tw = 0; tw < g.TW; ++tw) r[2 * tw] += e[tw], r[2 * tw + 1] += e[g.TW + tw];
      for (int64_t tw = 0; tw < g.TW; ++tw) r[2 * tw + 2] += e[2 * g.TW + tw], r[2 * tw + 3] += e[3 * g.TW + tw];
    }
    flush(2 * th - g.ph, acc[0]);
    flush(2 * th - g.ph + 1, acc[1]);
    std::fill(acc[0], acc[0] + g.Ub, T(0)), std::fill(acc[1], acc[1] + g.Ub, T(0));
    std::swap(acc[0], acc[2]), std::swap(acc[1], acc[3]);
  }
  flush(2 * g.TH - g.ph, acc[0]);
  flush(2 * g.TH - g.ph + 1, acc[1]);
}

#if defined(__AVX512F__)
// ---- float on AVX-512: 16 tiles of a tile row per step ----
// Plane rows are read with masked loads (zeros for padding). Columns 2tw .. 2tw+3 of 16 tiles
// are the even/odd lanes of 32-column windows (two-register permutes); results go out with
// masked stores, so nothing is stored and then re-read at another width.
namespace avx {
inline __m512i idx(int i0, int step) {
  alignas(64) int32_t v[16];
  for (int i = 0; i < 16; ++i) v[i] = i0 + step * i;
  return _mm512_load_si512(v);
}
inline __mmask16 lanes(int64_t n) {
  return n <= 0 ? __mmask16(0) : n >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << n) - 1);
}
// Lanes u of a 16-column segment starting at column c0 with c0 + u in [0, n).
inline __mmask16 window(int64_t c0, int64_t n) {
  const int64_t lo = std::clamp<int64_t>(-c0, 0, 16), hi = std::clamp<int64_t>(n - c0, 0, 16);
  return static_cast<__mmask16>(lanes(hi) & ~lanes(lo));
}
// A masked load at row + c (c may be negative: masked-off lanes are never touched, and the
// address is formed as an integer).
inline __m512 load_at(const float* row, int64_t c, __mmask16 m) {
  return _mm512_maskz_loadu_ps(m, reinterpret_cast<const float*>(reinterpret_cast<intptr_t>(row) + c * 4));
}
struct Perm {
  __m512i even = idx(0, 2), odd = idx(1, 2), zip_lo, zip_hi, down2 = idx(2, 1), up2 = idx(14, 1);
  Perm() {
    alignas(64) int32_t lo[16], hi[16];
    for (int i = 0; i < 8; ++i) lo[2 * i] = i, lo[2 * i + 1] = 16 + i, hi[2 * i] = 8 + i, hi[2 * i + 1] = 24 + i;
    zip_lo = _mm512_load_si512(lo), zip_hi = _mm512_load_si512(hi);
  }
};
inline __m512 sub(__m512 a, __m512 b) { return _mm512_sub_ps(a, b); }
inline __m512 add(__m512 a, __m512 b) { return _mm512_add_ps(a, b); }
inline __m512 neg(__m512 a) { return _mm512_sub_ps(_mm512_setzero_ps(), a); }

inline void store16(const PlainOut<float>& o, int xi, int64_t t, __mmask16 m, __m512 v) {
  _mm512_mask_storeu_ps(o.at(xi, t), m, v);
}

// ---- paired tile rows: for planes of at most 7 tiles per row (a row buffer fits one
// vector), tile rows th and th+1 share a vector: lanes [0, TW) hold row th, [TW, 2 TW) row
// th+1, which are also consecutive tiles in the transformed layout. ----
struct PairIdx {
  int64_t tw = -1;
  __m512i col[4];                   // column 2 tw + j of the tile's own row vector (two-register index)
  __m512i zip_a, zip_b;             // (x0, y0, x1, y1, ...) from the lanes of row th / row th+1
  __m512i zip_a2, zip_b2;           // the same, two columns to the right (lanes 0, 1 unused)
};
inline const PairIdx& pair_idx(int64_t TW) {
  thread_local PairIdx p;
  if (p.tw == TW) return p;
  alignas(64) int32_t v[16];
  for (int j = 0; j < 4; ++j) {
    for (int l = 0; l < 16; ++l) v[l] = l < TW ? 2 * l + j : l < 2 * TW ? 16 + 2 * (l - TW) + j : 0;
    p.col[j] = _mm512_load_si512(v);
  }
  auto zip = [&](int64_t first, int shift) {
    for (int u = 0; u < 16; ++u) {
      const int w = u - shift, l = w / 2;
      v[u] = w < 0 ? 0 : (w % 2 == 0 ? 0 : 16) + static_cast<int32_t>(first + l < 16 ? first + l : 0);
    }
    return _mm512_load_si512(v);
  };
  p.zip_a = zip(0, 0), p.zip_b = zip(TW, 0), p.zip_a2 = zip(0, 2), p.zip_b2 = zip(TW, 2);
  p.tw = TW;
  return p;
}
// Row h of a plane as a U-lane vector: lane u holds column u - pw (zero outside the plane).
inline __m512 load_row_vec(const float* plane, int64_t h, int64_t H, int64_t W, int64_t pw, __mmask16 cols) {
  if (h < 0 || h >= H) return _mm512_setzero_ps();
  return load_at(plane + h * W, -pw, cols);
}
}  // namespace avx

template <class Out>
void input_transform_pairs(const float* plane, const Geo& g, const Out& out) {
  using namespace avx;
  const PairIdx& P = pair_idx(g.TW);
  const __mmask16 cols = window(-g.pw, g.W);
  for (int64_t th = 0; th < g.TH; th += 2) {
    const int64_t h0 = 2 * th - g.ph;
    __m512 r[6];
    for (int k = 0; k < 6; ++k) r[k] = load_row_vec(plane, h0 + k, g.H, g.W, g.pw, cols);
    const __m512 ta[4] = {sub(r[0], r[2]), add(r[1], r[2]), sub(r[2], r[1]), sub(r[1], r[3])};
    const __m512 tb[4] = {sub(r[2], r[4]), add(r[3], r[4]), sub(r[4], r[3]), sub(r[3], r[5])};
    const __mmask16 m = lanes((th + 1 < g.TH ? 2 : 1) * g.TW);
    for (int a = 0; a < 4; ++a) {
      const __m512 e = _mm512_permutex2var_ps(ta[a], P.col[0], tb[a]), o = _mm512_permutex2var_ps(ta[a], P.col[1], tb[a]);
      const __m512 e1 = _mm512_permutex2var_ps(ta[a], P.col[2], tb[a]), o1 = _mm512_permutex2var_ps(ta[a], P.col[3], tb[a]);
      const int64_t t = th * g.TW;
      store16(out, 4 * a, t, m, sub(e, e1)), store16(out, 4 * a + 1, t, m, add(o, e1));
      store16(out, 4 * a + 2, t, m, sub(e1, o)), store16(out, 4 * a + 3, t, m, sub(o, o1));
    }
  }
}

template <class Out>
void input_transform(const float* plane, const Geo& g, const Out& out, float*) {
  using namespace avx;
  static const Perm P;
  if (g.TW <= 7) return input_transform_pairs(plane, g, out);
  for (int64_t tw = 0; tw < g.TW; tw += 16) {
    const int64_t c0 = 2 * tw - g.pw;  // columns [c0, c0 + 48) feed these 16 tiles
    const __mmask16 cols[3] = {window(c0, g.W), window(c0 + 16, g.W), window(c0 + 32, g.W)};
    const __mmask16 m = lanes(g.TW - tw);
    for (int64_t th = 0; th < g.TH; ++th) {
      __m512 t[4][3];
      for (int seg = 0; seg < 3; ++seg) {
        __m512 d[4];
        for (int k = 0; k < 4; ++k) {
          const int64_t h = 2 * th - g.ph + k;
          d[k] = load_at(plane + h * g.W, c0 + 16 * seg, h < 0 || h >= g.H ? __mmask16(0) : cols[seg]);
        }
        t[0][seg] = sub(d[0], d[2]), t[1][seg] = add(d[1], d[2]);
        t[2][seg] = sub(d[2], d[1]), t[3][seg] = sub(d[1], d[3]);
      }
      for (int a = 0; a < 4; ++a) {
        const __m512 e = _mm512_permutex2var_ps(t[a][0], P.even, t[a][1]);
        const __m512 o = _mm512_permutex2var_ps(t[a][0], P.odd, t[a][1]);
        const __m512 s0 = _mm512_permutex2var_ps(t[a][0], P.down2, t[a][1]);
        const __m512 s1 = _mm512_permutex2var_ps(t[a][1], P.down2, t[a][2]);
        const __m512 e1 = _mm512_permutex2var_ps(s0, P.even, s1), o1 = _mm512_permutex2var_ps(s0, P.odd, s1);
        const int64_t tt = th * g.TW + tw;
        store16(out, 4 * a, tt, m, sub(e, e1)), store16(out, 4 * a + 1, tt, m, add(o, e1));
        store16(out, 4 * a + 2, tt, m, sub(e1, o)), store16(out, 4 * a + 3, tt, m, sub(o, o1));
      }
    }
  }
}

template <class Out>
void output_adjoint_pairs(const float* plane, const Geo& g, const Out& out) {
  using namespace avx;
  const PairIdx& P = pair_idx(g.TW);
  const __mmask16 cols = lanes(g.Wo);
  for (int64_t th = 0; th < g.TH; th += 2) {
    __m512 y[4];
    for (int k = 0; k < 4; ++k) y[k] = load_row_vec(plane, 2 * th + k, g.Ho, g.Wo, 0, cols);
    const __m512 g00 = _mm512_permutex2var_ps(y[0], P.col[0], y[2]), g01 = _mm512_permutex2var_ps(y[0], P.col[1], y[2]);
    const __m512 g10 = _mm512_permutex2var_ps(y[1], P.col[0], y[3]), g11 = _mm512_permutex2var_ps(y[1], P.col[1], y[3]);
    const __m512 q[4][2] = {{g00, g01}, {add(g00, g10), add(g01, g11)}, {sub(g00, g10), sub(g01, g11)},
                            {neg(g10), neg(g11)}};
    const __mmask16 m = lanes((th + 1 < g.TH ? 2 : 1) * g.TW);
    const int64_t t = th * g.TW;
    for (int a = 0; a < 4; ++a) {
      store16(out, 4 * a, t, m, q[a][0]), store16(out, 4 * a + 1, t, m, add(q[a][0], q[a][1]));
      store16(out, 4 * a + 2, t, m, sub(q[a][0], q[a][1])), store16(out, 4 * a + 3, t, m, neg(q[a][1]));
    }
  }
}

template <class Out>
void output_adjoint(const float* plane, const Geo& g, const Out& out, float*) {
  using namespace avx;
  static const Perm P;
  if (g.TW <= 7) return output_adjoint_pairs(plane, g, out);
  for (int64_t tw = 0; tw < g.TW; tw += 16) {
    const __mmask16 c0 = window(2 * tw, g.Wo), c1 = window(2 * tw + 16, g.Wo), m = lanes(g.TW - tw);
    for (int64_t th = 0; th < g.TH; ++th) {
      const float* y0 = plane + 2 * th * g.Wo;
      const __mmask16 r1 = 2 * th + 1 < g.Ho ? __mmask16(0xFFFF) : __mmask16(0);
      const __m512 a0 = load_at(y0, 2 * tw, c0), a1 = load_at(y0, 2 * tw + 16, c1);
      const __m512 b0 = load_at(y0 + g.Wo, 2 * tw, c0 & r1), b1 = load_at(y0 + g.Wo, 2 * tw + 16, c1 & r1);
      const __m512 g00 = _mm512_permutex2var_ps(a0, P.even, a1), g01 = _mm512_permutex2var_ps(a0, P.odd, a1);
      const __m512 g10 = _mm512_permutex2var_ps(b0, P.even, b1), g11 = _mm512_permutex2var_ps(b0, P.odd, b1);
      const __m512 q[4][2] = {{g00, g01}, {add(g00, g10), add(g01, g11)}, {sub(g00, g10), sub(g01, g11)},
                              {neg(g10), neg(g11)}};
      const int64_t tt = th * g.TW + tw;
      for (int a = 0; a < 4; ++a) {
        store16(out, 4 * a, tt, m, q[a][0]), store16(out, 4 * a + 1, tt, m, add(q[a][0], q[a][1]));
        store16(out, 4 * a + 2, tt, m, sub(q[a][0], q[a][1])), store16(out, 4 * a + 3, tt, m, neg(q[a][1]));
      }
    }
  }
}

inline void output_transform_pairs(const float* m, int64_t xs, const Geo& g, float bias, float* plane) {
  using namespace avx;
  const PairIdx& P = pair_idx(g.TW);
  const __m512 vb = _mm512_set1_ps(bias);
  const __mmask16 cols = lanes(g.Wo);
  for (int64_t th = 0; th < g.TH; th += 2) {
    const __mmask16 k = lanes((th + 1 < g.TH ? 2 : 1) * g.TW);
    const float* s = m + th * g.TW;
    __m512 s0[4], s1[4];
    for (int b = 0; b < 4; ++b) {
      const __m512 m0 = _mm512_maskz_loadu_ps(k, s + b * xs), m1 = _mm512_maskz_loadu_ps(k, s + (4 + b) * xs);
      const __m512 m2 = _mm512_maskz_loadu_ps(k, s + (8 + b) * xs), m3 = _mm512_maskz_loadu_ps(k, s + (12 + b) * xs);
      s0[b] = add(add(m0, m1), m2), s1[b] = sub(sub(m1, m2), m3);
    }
    const __m512 y00 = add(add(s0[0], s0[1]), s0[2]), y01 = sub(sub(s0[1], s0[2]), s0[3]);
    const __m512 y10 = add(add(s1[0], s1[1]), s1[2]), y11 = sub(sub(s1[1], s1[2]), s1[3]);
    // Output rows 2th, 2th+1 come from the first half of the lanes, 2th+2, 2th+3 from the second.
    const __m512 rows[4] = {_mm512_permutex2var_ps(y00, P.zip_a, y01), _mm512_permutex2var_ps(y10, P.zip_a, y11),
                            _mm512_permutex2var_ps(y00, P.zip_b, y01), _mm512_permutex2var_ps(y10, P.zip_b, y11)};
    for (int r = 0; r < 4 && 2 * th + r < g.Ho; ++r)
      _mm512_mask_storeu_ps(plane + (2 * th + r) * g.Wo, cols, add(rows[r], vb));
  }
}

template <>
inline void output_transform<float>(const float* m, int64_t xs, const Geo& g, float bias, float* plane, float*) {
  using namespace avx;
  static const Perm P;
  if (g.TW <= 7) return output_transform_pairs(m, xs, g, bias, plane);
  const __m512 vb = _mm512_set1_ps(bias);
  for (int64_t tw = 0; tw < g.TW; tw += 16) {
    const __mmask16 k = lanes(g.TW - tw), c0 = window(2 * tw, g.Wo), c1 = window(2 * tw + 16, g.Wo);
    for (int64_t th = 0; th < g.TH; ++th) {
      const float* s = m + th * g.TW + tw;
      __m512 s0[4], s1[4];
      for (int b = 0; b < 4; ++b) {
        const __m512 m0 = _mm512_maskz_loadu_ps(k, s + b * xs), m1 = _mm512_maskz_loadu_ps(k, s + (4 + b) * xs);
        const __m512 m2 = _mm512_maskz_loadu_ps(k, s + (8 + b) * xs), m3 = _mm512_maskz_loadu_ps(k, s + (12 + b) * xs);
        s0[b] = add(add(m0, m1), m2), s1[b] = sub(sub(m1, m2), m3);
      }
      for (int r = 0; r < 2 && 2 * th + r < g.Ho; ++r) {
        const __m512* q = r == 0 ? s0 : s1;
        const __m512 y0 = add(add(q[0], q[1]), q[2]), y1 = sub(sub(q[1], q[2]), q[3]);
        float* row = plane + (2 * th + r) * g.Wo + 2 * tw;
        _mm512_mask_storeu_ps(row, c0, add(_mm512_permutex2var_ps(y0, P.zip_lo, y1), vb));
        _mm512_mask_storeu_ps(row + 16, c1, add(_mm512_permutex2var_ps(y0, P.zip_hi, y1), vb));
      }
    }
  }
}

inline void input_adjoint_pairs(const float* dv, int64_t xs, const Geo& g, float* plane) {
  using namespace avx;
  const PairIdx& P = pair_idx(g.TW);
  const __mmask16 cols = static_cast<__mmask16>(lanes(g.pw + g.W) & ~lanes(g.pw));
  auto flush = [&](int64_t h, __m512 row) {  // lane u is column u - pw
    if (h < 0 || h >= g.H) return;
    const intptr_t addr = reinterpret_cast<intptr_t>(plane + h * g.W) - g.pw * 4;
    _mm512_mask_storeu_ps(reinterpret_cast<float*>(addr), cols, row);
  };
  const __mmask16 z01 = lanes(2 * g.TW), z23 = static_cast<__mmask16>(lanes(2 * g.TW + 2) & ~lanes(2));
  __m512 carry[2] = {_mm512_setzero_ps(), _mm512_setzero_ps()};  // rows h0, h0 + 1 from the last pair
  for (int64_t th = 0; th < g.TH; th += 2) {
    const __mmask16 m = lanes((th + 1 < g.TH ? 2 : 1) * g.TW);
    const float* s = dv + th * g.TW;
    __m512 v[4][4];
    for (int a = 0; a < 4; ++a)
      for (int b = 0; b < 4; ++b) v[a][b] = _mm512_maskz_loadu_ps(m, s + (4 * a + b) * xs);
    __m512 ra[4], rb[4];  // patch row k of tile row th (ra) and th + 1 (rb), as input-row vectors
    for (int k = 0; k < 4; ++k) {
      __m512 p[4];
      for (int b = 0; b < 4; ++b)
        p[b] = k == 0 ? v[0][b] : k == 1 ? add(sub(v[1][b], v[2][b]), v[3][b]) : k == 2 ? sub(add(v[1][b], v[2][b]), v[0][b]) : neg(v[3][b]);
      const __m512 c0 = p[0], c1 = add(sub(p[1], p[2]), p[3]), c2 = sub(add(p[1], p[2]), p[0]), c3 = neg(p[3]);
      // Columns 2 tw + l get c_l: (c0, c1) zipped into columns [0, 2 TW), (c2, c3) into [2, 2 TW + 2).
      ra[k] = add(_mm512_maskz_permutex2var_ps(z01, c0, P.zip_a, c1), _mm512_maskz_permutex2var_ps(z23, c2, P.zip_a2, c3));
      rb[k] = add(_mm512_maskz_permutex2var_ps(z01, c0, P.zip_b, c1), _mm512_maskz_permutex2var_ps(z23, c2, P.zip_b2, c3));
    }
    const int64_t h0 = 2 * th - g.ph;
    flush(h0, add(ra[0], carry[0]));
    flush(h0 + 1, add(ra[1], carry[1]));
    flush(h0 + 2, add(ra[2], rb[0]));
    flush(h0 + 3, add(ra[3], rb[1]));
    carry[0] = rb[2], carry[1] = rb[3];
  }
  const int64_t h_end = 2 * ((g.TH + 1) / 2 * 2) - g.ph;  // the rows after the last pair
  flush(h_end, carry[0]);
  flush(h_end + 1, carry[1]);
}

template <>
inline void input_adjoint<float>(const float* dv, int64_t xs, const Geo& g, float* plane, float* buf) {
  using namespace avx;
  static const Perm P;
  if (g.TW <= 7) return input_adjoint_pairs(dv, xs, g, plane);
  // acc[k]: patch row k of the current tile row, columns u = c + pw; each 16-lane piece gets
  // one whole-vector add per tile row; rows 0-1 are final after each tile row.
  float* acc[4] = {buf, buf + g.Ub, buf + 2 * g.Ub, buf + 3 * g.Ub};
  std::fill(buf, buf + 4 * g.Ub, 0.f);
  auto flush = [&](int64_t h, const float* row) {
    if (h < 0 || h >= g.H) return;
    for (int64_t c = 0; c < g.W; c += 16)
      _mm512_mask_storeu_ps(plane + h * g.W + c, lanes(g.W - c), _mm512_loadu_ps(row + g.pw + c));
  };
  const __m512 zero = _mm512_setzero_ps();
  for (int64_t th = 0; th < g.TH; ++th) {
    __m512 carry[4] = {zero, zero, zero, zero};  // the two columns spilling into the next 16 tiles
    for (int64_t tw = 0; tw < g.TW; tw += 16) {
      const __mmask16 m = lanes(g.TW - tw);
      const float* s = dv + th * g.TW + tw;
      __m512 v[4][4];
      for (int a = 0; a < 4; ++a)
        for (int b = 0; b < 4; ++b) v[a][b] = _mm512_maskz_loadu_ps(m, s + (4 * a + b) * xs);
      for (int k = 0; k < 4; ++k) {
        __m512 p[4];  // row k of B dv
        for (int b = 0; b < 4; ++b)
          p[b] = k == 0 ? v[0][b] : k == 1 ? add(sub(v[1][b], v[2][b]), v[3][b]) : k == 2 ? sub(add(v[1][b], v[2][b]), v[0][b]) : neg(v[3][b]);
        const __m512 c0 = p[0], c1 = add(sub(p[1], p[2]), p[3]), c2 = sub(add(p[1], p[2]), p[0]), c3 = neg(p[3]);
        // Columns 2tw + l get c_l: (c0, c1) interleaved at offset 0, (c2, c3) at offset 2.
        const __m512 lo = _mm512_permutex2var_ps(c0, P.zip_lo, c1), hi = _mm512_permutex2var_ps(c0, P.zip_hi, c1);
        const __m512 slo = _mm512_permutex2var_ps(c2, P.zip_lo, c3), shi = _mm512_permutex2var_ps(c2, P.zip_hi, c3);
        float* r = acc[k] + 2 * tw;
        _mm512_storeu_ps(r, add(_mm512_loadu_ps(r), add(lo, _mm512_permutex2var_ps(carry[k], P.up2, slo))));
        _mm512_storeu_ps(r + 16, add(_mm512_loadu_ps(r + 16), add(hi, _mm512_permutex2var_ps(slo, P.up2, shi))));
        carry[k] = shi;
      }
    }
    const int64_t tail = (g.TW + 15) / 16 * 32;  // the last carry's two columns
    for (int k = 0; k < 4; ++k) {
      float* r = acc[k] + tail;
      _mm512_storeu_ps(r, add(_mm512_loadu_ps(r), _mm512_permutex2var_ps(carry[k], P.up2, zero)));
    }
    flush(2 * th - g.ph, acc[0]);
    flush(2 * th - g.ph + 1, acc[1]);
    std::fill(acc[0], acc[0] + g.Ub, 0.f), std::fill(acc[1], acc[1] + g.Ub, 0.f);
    std::swap(acc[0], acc[2]), std::swap(acc[1], acc[3]);
  }
  flush(2 * g.TH - g.ph, acc[0]);
  flush(2 * g.TH - g.ph + 1, acc[1]);
}
#endif

}  // namespace gr::native::winograd

#if defined(__AVX2__) && !defined(__AVX512F__)
#include "core/native/conv/winograd_transforms_avx2.h"  // float on AVX2: 8 tiles per step
#endif
