// Direct convolution (see conv2d_direct.h). Shapes: x [N, C_in, H, W], w [C_out, cg, kH, kW]
// with cg = C_in / groups, y [N, C_out, H_out, W_out]; og = C_out / groups; KK = kH * kW;
// CKK = cg * KK taps per output. Output column wo reads input column wo - pad_w + j * dil_w
// (stride_w = 1), output row ho reads input row ho * stride_h - pad_h + i * dil_h.
//   forward      y[n, o] row  = bias[o] + sum_taps w[o, tap] * (shifted input row)
//   grad weight  gw[o, tap]  += gy[n, o] row . (shifted input row);  gb[o] += sum gy[n, o]
//   grad input   gx[n, c] row = sum_{o, i, j} w[o, c, i, j] * (shifted gy row)
// The AVX-512 kernels keep a block of output channels x 16-lane row segments (forward, input
// gradient) or output channels x taps (weight gradient) in registers; masks cut each row
// segment to the columns inside the image, so padding costs no copies.
#include "core/native/conv/conv2d_direct.h"

#include <algorithm>
#include <array>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/parallel.h"

#include "core/native/gemm/gemm_kernels.h"  // (VecF::hsum: a horizontal sum GCC 12 does not warn about)

namespace gr::native {

bool direct_applicable(const Conv2dArgs& a) { return a.stride_w == 1; }

namespace {

// Items per parallel_for chunk for items of `macs` multiply-adds each: about 64 K per chunk,
// so tiny convolutions stay on one thread.
int64_t grain_for(int64_t macs) { return std::max<int64_t>(1, (int64_t(1) << 16) / std::max<int64_t>(macs, 1)); }

// Output columns [lo, hi) whose input column wo + off (off = j * dil_w - pad_w) lies in [0, W).
std::pair<int64_t, int64_t> valid_cols(const Conv2dArgs& a, int64_t off) {
  return {std::clamp<int64_t>(-off, 0, a.W_out), std::clamp<int64_t>(a.W - off, 0, a.W_out)};
}

// ---- plain loops (any T): one output plane, weight or input plane per item ----

template <class T>
void forward_plain(const Conv2dArgs& a, const T* x, const T* w, const T* bias, T* y) {
  const int64_t cg = a.C_in / a.groups, og = a.C_out / a.groups, KK = a.kH * a.kW, HW = a.H * a.W,
                L = a.H_out * a.W_out;
  parallel_for(0, a.N * a.C_out, grain_for(L * cg * KK), [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t n = p / a.C_out, o = p % a.C_out, g = o / og;
      T* yp = y + p * L;
      std::fill(yp, yp + L, bias ? bias[o] : T(0));
      for (int64_t c = 0; c < cg; ++c)
        for (int64_t i = 0; i < a.kH; ++i)
          for (int64_t j = 0; j < a.kW; ++j) {
            const T wv = w[(o * cg + c) * KK + i * a.kW + j];
            const int64_t off = j * a.dil_w - a.pad_w;
            const auto [lo, hi] = valid_cols(a, off);
            for (int64_t ho = 0; ho < a.H_out; ++ho) {
              const int64_t r = ho * a.stride_h - a.pad_h + i * a.dil_h;
              if (r < 0 || r >= a.H) continue;
              const T* xr = x + (n * a.C_in + g * cg + c) * HW + r * a.W + off;
              T* yr = yp + ho * a.W_out;
              for (int64_t wo = lo; wo < hi; ++wo) yr[wo] += wv * xr[wo];
            }
          }
    }
  });
}

// Weight and bias gradients, one output channel per item; row dot products summed in double.
template <class T>
void weight_grad_plain(const Conv2dArgs& a, const T* gy, const T* x, T* gw, T* gb) {
  const int64_t cg = a.C_in / a.groups, og = a.C_out / a.groups, KK = a.kH * a.kW, HW = a.H * a.W,
                L = a.H_out * a.W_out;
  parallel_for(0, a.C_out, grain_for(a.N * L * cg * KK), [&](int64_t o0, int64_t o1) {
    for (int64_t o = o0; o < o1; ++o) {
      const int64_t g = o / og;
      for (int64_t c = 0; c < cg; ++c)
        for (int64_t i = 0; i < a.kH; ++i)
          for (int64_t j = 0; j < a.kW; ++j) {
            const int64_t off = j * a.dil_w - a.pad_w;
            const auto [lo, hi] = valid_cols(a, off);
            double sum = 0;
            for (int64_t n = 0; n < a.N; ++n)
              for (int64_t ho = 0; ho < a.H_out; ++ho) {
                const int64_t r = ho * a.stride_h - a.pad_h + i * a.dil_h;
                if (r < 0 || r >= a.H) continue;
                const T* xr = x + (n * a.C_in + g * cg + c) * HW + r * a.W + off;
                const T* gr = gy + (n * a.C_out + o) * L + ho * a.W_out;
                T part = 0;
#pragma omp simd reduction(+ : part)
                for (int64_t wo = lo; wo < hi; ++wo) part += gr[wo] * xr[wo];
                sum += part;
              }
            gw[(o * cg + c) * KK + i * a.kW + j] = static_cast<T>(sum);
          }
      if (gb) {
        double sum = 0;
        for (int64_t n = 0; n < a.N; ++n) {
          const T* gp = gy + (n * a.C_out + o) * L;
          T part = 0;
#pragma omp simd reduction(+ : part)
          for (int64_t l = 0; l < L; ++l) part += gp[l];
          sum += part;
        }
        gb[o] = static_cast<T>(sum);
      }
    }
  });
}

// Input gradient, one input plane per item: scatter each gy row, shifted, into gx rows.
template <class T>
void input_grad_plain(const Conv2dArgs& a, const T* gy, const T* w, T* gx) {
  const int64_t cg = a.C_in / a.groups, og = a.C_out / a.groups, KK = a.kH * a.kW, HW = a.H * a.W,
                L = a.H_out * a.W_out;
  parallel_for(0, a.N * a.C_in, grain_for(og * L * KK), [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t n = p / a.C_in, c = p % a.C_in, g = c / cg;
      T* gp = gx + p * HW;
      std::fill(gp, gp + HW, T(0));
      for (int64_t o = g * og; o < (g + 1) * og; ++o)
        for (int64_t i = 0; i < a.kH; ++i)
          for (int64_t j = 0; j < a.kW; ++j) {
            const T wv = w[(o * cg + c % cg) * KK + i * a.kW + j];
            const int64_t off = j * a.dil_w - a.pad_w;
            const auto [lo, hi] = valid_cols(a, off);
            for (int64_t ho = 0; ho < a.H_out; ++ho) {
              const int64_t r = ho * a.stride_h - a.pad_h + i * a.dil_h;
              if (r < 0 || r >= a.H) continue;
              T* xr = gp + r * a.W + off;
              const T* gr = gy + (n * a.C_out + o) * L + ho * a.W_out;
              for (int64_t wo = lo; wo < hi; ++wo) xr[wo] += wv * gr[wo];
            }
          }
    }
  });
}

#if defined(__AVX512F__)
// ---- AVX-512 float32 kernels ----

template <int N, class F>
inline void unroll(F&& f) {
  [&]<int... I>(std::integer_sequence<int, I...>) {
    (f(std::integral_constant<int, I>{}), ...);
  }(std::make_integer_sequence<int, N>{});
}

// Lanes [lo, hi) of 16 (clamped to 0..16).
__mmask16 lanes(int64_t lo, int64_t hi) {
  lo = std::clamp<int64_t>(lo, 0, 16), hi = std::clamp<int64_t>(hi, 0, 16);
  return hi <= lo ? __mmask16(0) : static_cast<__mmask16>(((1u << hi) - 1u) & ~((1u << lo) - 1u));
}

// Rows of width `wd` written in 16-lane segments, each lane reading column q + off0 + j * step
// of a row of width `wr` for kernel column j. mask[s] marks the real lanes of segment s,
// read[s * kW + j] those whose read column lies in [0, wr). nv: segments one register block
// covers; segments past `segs` (up to a multiple of nv) have empty masks.
struct RowGeo {
  int64_t segs = 0, nseg = 0;
  int nv = 1;
  std::vector<__mmask16> mask, read;
};

RowGeo row_geo(int64_t wd, int64_t wr, int64_t kW, int64_t off0, int64_t step) {
  RowGeo g;
  g.segs = (wd + 15) / 16;
  g.nv = g.segs == 3 ? 3 : g.segs >= 2 ? 2 : 1;
  g.nseg = (g.segs + g.nv - 1) / g.nv * g.nv;
  for (int64_t s = 0; s < g.nseg; ++s) {
    g.mask.push_back(lanes(0, wd - s * 16));
    for (int64_t j = 0; j < kW; ++j) {
      const int64_t start = s * 16 + off0 + j * step;
      g.read.push_back(lanes(-start, std::min(wd - s * 16, wr - start)));
    }
  }
  return g;
}

// Forward for OB output channels of one image: x is the image's first input plane of the
// group, w and bias start at the first of the OB channels, y at its output plane.
template <int OB, int NV>
void forward_block(const Conv2dArgs& a, const RowGeo& geo, const float* x, const float* w, const float* bias,
                   float* y) {
  const int64_t cg = a.C_in / a.groups, KK = a.kH * a.kW, CKK = cg * KK, HW = a.H * a.W, L = a.H_out * a.W_out;
  for (int64_t ho = 0; ho < a.H_out; ++ho)
    for (int64_t s0 = 0; s0 < geo.nseg; s0 += NV) {
      __m512 acc[OB][NV];
      unroll<OB>([&](auto ob) {
        const __m512 b = bias ? _mm512_set1_ps(bias[ob]) : _mm512_setzero_ps();
        unroll<NV>([&](auto v) { acc[ob][v] = b; });
      });
      const __mmask16* m = geo.read.data() + s0 * a.kW;
      for (int64_t i = 0; i < a.kH; ++i) {
        const int64_t r = ho * a.stride_h - a.pad_h + i * a.dil_h;
        if (r < 0 || r >= a.H) continue;
        for (int64_t c = 0; c < cg; ++c) {
          const float* xr = x + c * HW + r * a.W + s0 * 16 - a.pad_w;  // lanes outside the row are masked
          const float* wk = w + c * KK + i * a.kW;
          for (int64_t j = 0; j < a.kW; ++j) {
            __m512 xv[NV];
            unroll<NV>([&](auto v) { xv[v] = _mm512_maskz_loadu_ps(m[v * a.kW + j], xr + v * 16 + j * a.dil_w); });
            unroll<OB>([&](auto ob) {
              const __m512 wv = _mm512_set1_ps(wk[ob * CKK + j]);
              unroll<NV>([&](auto v) { acc[ob][v] = _mm512_fmadd_ps(wv, xv[v], acc[ob][v]); });
            });
          }
        }
      }
      float* yr = y + ho * a.W_out + s0 * 16;
      unroll<OB>([&](auto ob) {
        unroll<NV>([&](auto v) { _mm512_mask_storeu_ps(yr + ob * L + v * 16, geo.mask[s0 + v], acc[ob][v]); });
      });
    }
}

// `count` channels from the first of w / bias / y: blocks of OB, the rest in halving blocks.
template <int OB, int NV>
void forward_channels(const Conv2dArgs& a, const RowGeo& geo, const float* x, const float* w, const float* bias,
                      float* y, int64_t count) {
  const int64_t CKK = a.C_in / a.groups * a.kH * a.kW, L = a.H_out * a.W_out;
  int64_t o = 0;
  for (; o + OB <= count; o += OB) forward_block<OB, NV>(a, geo, x, w + o * CKK, bias ? bias + o : nullptr, y + o * L);
  if constexpr (OB > 1)
    if (o < count) forward_channels<OB / 2, NV>(a, geo, x, w + o * CKK, bias ? bias + o : nullptr, y + o * L, count - o);
}

void forward_avx512(const Conv2dArgs& a, const float* x, const float* w, const float* bias, float* y) {
  const RowGeo geo = row_geo(a.W_out, a.W, a.kW, -a.pad_w, a.dil_w);
  const int64_t G = a.groups, cg = a.C_in / G, og = a.C_out / G, CKK = cg * a.kH * a.kW, HW = a.H * a.W,
                L = a.H_out * a.W_out;
  const int64_t ob = geo.nv == 1 ? 16 : 8, blocks = (og + ob - 1) / ob;
  parallel_for(0, a.N * G * blocks, grain_for(ob * L * CKK), [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t n = t / (G * blocks), g = t / blocks % G, o0 = g * og + t % blocks * ob;
      const int64_t count = std::min(ob, (g + 1) * og - o0);
      const float *xn = x + (n * a.C_in + g * cg) * HW, *wo = w + o0 * CKK, *bo = bias ? bias + o0 : nullptr;
      float* yo = y + (n * a.C_out + o0) * L;
      if (geo.nv == 1) forward_channels<16, 1>(a, geo, xn, wo, bo, yo, count);
      else if (geo.nv == 2) forward_channels<8, 2>(a, geo, xn, wo, bo, yo, count);
      else forward_channels<8, 3>(a, geo, xn, wo, bo, yo, count);
    }
  });
}

// One tap (c, i, j) of the weight gradient: the input plane offset c * H * W, the row offset
// i * dil_h - pad_h and the column offset j * dil_w - pad_w.
struct Tap {
  int64_t plane, row, col;
};

// Weight (and bias) gradient sums for OB output channels x KB taps over nb images, added
// into gw[ob * ldw + t] and gb[ob] (if not null). x: first image's first input plane of the
// group; gy: first image's plane of the first channel; tmask[s * ldm + t]: the read lanes
// of segment s for tap t; zeros: a zero row standing in for rows in the padding.
template <int OB, int KB>
void weight_grad_block(const Conv2dArgs& a, const RowGeo& geo, const Tap* taps, const __mmask16* tmask, int64_t ldm,
                       const float* zeros, const float* x, const float* gy, int64_t nb, double* gw, int64_t ldw,
                       double* gb) {
  const int64_t HW = a.H * a.W, L = a.H_out * a.W_out;
  __m512 acc[OB][KB], bacc[OB];
  unroll<OB>([&](auto ob) {
    bacc[ob] = _mm512_setzero_ps();
    unroll<KB>([&](auto t) { acc[ob][t] = _mm512_setzero_ps(); });
  });
  for (int64_t n = 0; n < nb; ++n) {
    const float* xn = x + n * a.C_in * HW;
    for (int64_t ho = 0; ho < a.H_out; ++ho) {
      const float* p[KB];
      unroll<KB>([&](auto t) {
        const int64_t r = ho * a.stride_h + taps[t].row;
        p[t] = (r >= 0 && r < a.H ? xn + taps[t].plane + r * a.W : zeros) + taps[t].col;
      });
      const float* grow = gy + n * a.C_out * L + ho * a.W_out;
      for (int64_t s = 0; s < geo.segs; ++s) {
        __m512 gv[OB];
        unroll<OB>([&](auto ob) {
          gv[ob] = _mm512_maskz_loadu_ps(geo.mask[s], grow + ob * L + s * 16);
          bacc[ob] = _mm512_add_ps(bacc[ob], gv[ob]);
        });
        const __mmask16* tm = tmask + s * ldm;
        unroll<KB>([&](auto t) {
          const __m512 xv = _mm512_maskz_loadu_ps(tm[t], p[t] + s * 16);
          unroll<OB>([&](auto ob) { acc[ob][t] = _mm512_fmadd_ps(gv[ob], xv, acc[ob][t]); });
        });
      }
    }
  }
  unroll<OB>([&](auto ob) {
    unroll<KB>([&](auto t) { gw[ob * ldw + t] += gemm_detail::VecF::hsum(acc[ob][t]); });
    if (gb) gb[ob] += gemm_detail::VecF::hsum(bacc[ob]);
  });
}

// Taps per weight_grad_block call: 2 x 13 accumulators + 2 bias + 2 gy + 1 input vector fit
// the 32 registers.
constexpr int kMaxTaps = 13;
using WeightGradFn = decltype(&weight_grad_block<1, 1>);
template <int OB, int... K>
constexpr std::array<WeightGradFn, sizeof...(K)> weight_grad_table(std::integer_sequence<int, K...>) {
  return {&weight_grad_block<OB, K + 1>...};
}
constexpr auto kWeightGrad1 = weight_grad_table<1>(std::make_integer_sequence<int, kMaxTaps>{});
constexpr auto kWeightGrad2 = weight_grad_table<2>(std::make_integer_sequence<int, kMaxTaps>{});

// Work items are (split of the images, group, pair of output channels); each split sums
// into its own double buffer, added up at the end.
void weight_grad_avx512(const Conv2dArgs& a, const float* gy, const float* x, float* gw, float* gb) {
  const RowGeo geo = row_geo(a.W_out, a.W, a.kW, -a.pad_w, a.dil_w);
  const int64_t G = a.groups, cg = a.C_in / G, og = a.C_out / G, KK = a.kH * a.kW, CKK = cg * KK, HW = a.H * a.W,
                L = a.H_out * a.W_out;
  std::vector<Tap> taps;
  std::vector<__mmask16> tmask(static_cast<size_t>(geo.segs * CKK));
  for (int64_t c = 0; c < cg; ++c)
    for (int64_t i = 0; i < a.kH; ++i)
      for (int64_t j = 0; j < a.kW; ++j) {
        for (int64_t s = 0; s < geo.segs; ++s) tmask[s * CKK + taps.size()] = geo.read[s * a.kW + j];
        taps.push_back({c * HW, i * a.dil_h - a.pad_h, j * a.dil_w - a.pad_w});
      }
  const std::vector<float> zero_row(static_cast<size_t>(a.pad_w + (a.kW - 1) * a.dil_w + geo.segs * 16 + 16), 0.f);
  const int64_t chunks = (CKK + kMaxTaps - 1) / kMaxTaps, pairs = (og + 1) / 2, items = G * pairs;
  // Images per call: enough rows that the final horizontal sums cost little.
  const int64_t nb = std::min(a.N, std::max<int64_t>(1, 64 / std::max<int64_t>(a.H_out * geo.segs, 1) + 1));
  const int threads = in_parallel_region() ? 1 : get_num_threads();
  const int64_t splits = std::clamp<int64_t>((2 * threads + items - 1) / items, 1, (a.N + nb - 1) / nb);
  const int64_t stride = a.C_out * CKK + a.C_out;
  std::vector<double> part(static_cast<size_t>(splits * stride), 0.0);
  // Within a thread's range the images are the outer loop, so grad_output is read in order
  // (all channels of a few images, then the next images) rather than one channel pair at a time.
  parallel_for(0, splits * items, 1, [&](int64_t w0, int64_t w1) {
    for (int64_t r0 = w0, r1; r0 < w1; r0 = r1) {
      const int64_t sp = r0 / items;
      r1 = std::min(w1, (sp + 1) * items);
      double* pw = part.data() + sp * stride;
      for (int64_t n0 = a.N * sp / splits, n1 = a.N * (sp + 1) / splits; n0 < n1; n0 += nb)
        for (int64_t wi = r0; wi < r1; ++wi) {
          const int64_t g = wi % items / pairs, o0 = g * og + wi % pairs * 2;
          const int64_t count = std::min<int64_t>(2, (g + 1) * og - o0);
          for (int64_t ch = 0; ch < chunks; ++ch) {
            const int64_t t0 = CKK * ch / chunks, kb = CKK * (ch + 1) / chunks - t0;
            const WeightGradFn fn = (count == 2 ? kWeightGrad2 : kWeightGrad1)[kb - 1];
            fn(a, geo, taps.data() + t0, tmask.data() + t0, CKK, zero_row.data() + a.pad_w,
               x + (n0 * a.C_in + g * cg) * HW, gy + (n0 * a.C_out + o0) * L, std::min(nb, n1 - n0),
               pw + o0 * CKK + t0, CKK, gb && ch == 0 ? pw + a.C_out * CKK + o0 : nullptr);
          }
        }
    }
  });
  for (int64_t k = 0; k < a.C_out * CKK + (gb ? a.C_out : 0); ++k) {
    double sum = 0;
    for (int64_t sp = 0; sp < splits; ++sp) sum += part[sp * stride + k];
    (k < a.C_out * CKK ? gw[k] : gb[k - a.C_out * CKK]) = static_cast<float>(sum);
  }
}

// Input gradient for CB input channels of one image: gy is the image's plane of the group's
// first output channel, w the weight of (that channel, the first of the CB), gx the first
// CB plane. Two accumulator sets (even and odd output channels) for independent FMA chains.
template <int CB, int NV>
void input_grad_block(const Conv2dArgs& a, const RowGeo& geo, const float* gy, const float* w, float* gx) {
  const int64_t og = a.C_out / a.groups, KK = a.kH * a.kW, CKK = a.C_in / a.groups * KK, HW = a.H * a.W,
                L = a.H_out * a.W_out;
  for (int64_t r = 0; r < a.H; ++r)
    for (int64_t s0 = 0; s0 < geo.nseg; s0 += NV) {
      __m512 acc[2][CB][NV];
      unroll<2>([&](auto p) { unroll<CB>([&](auto cb) { unroll<NV>([&](auto v) { acc[p][cb][v] = _mm512_setzero_ps(); }); }); });
      const __mmask16* m = geo.read.data() + s0 * a.kW;
      for (int64_t i = 0; i < a.kH; ++i) {
        const int64_t h = r + a.pad_h - i * a.dil_h;
        if (h < 0 || h % a.stride_h != 0 || h / a.stride_h >= a.H_out) continue;
        const float* grow = gy + h / a.stride_h * a.W_out + s0 * 16 + a.pad_w;  // lanes outside the row are masked
        auto step = [&](auto p, int64_t o) {
          const float *go = grow + o * L, *wo = w + o * CKK + i * a.kW;
          for (int64_t j = 0; j < a.kW; ++j) {
            __m512 gv[NV];
            unroll<NV>([&](auto v) { gv[v] = _mm512_maskz_loadu_ps(m[v * a.kW + j], go + v * 16 - j * a.dil_w); });
            unroll<CB>([&](auto cb) {
              const __m512 wv = _mm512_set1_ps(wo[cb * KK + j]);
              unroll<NV>([&](auto v) { acc[p][cb][v] = _mm512_fmadd_ps(wv, gv[v], acc[p][cb][v]); });
            });
          }
        };
        int64_t o = 0;
        for (; o + 2 <= og; o += 2) step(std::integral_constant<int, 0>{}, o), step(std::integral_constant<int, 1>{}, o + 1);
        if (o < og) step(std::integral_constant<int, 0>{}, o);
      }
      float* xr = gx + r * a.W + s0 * 16;
      unroll<CB>([&](auto cb) {
        unroll<NV>([&](auto v) {
          _mm512_mask_storeu_ps(xr + cb * HW + v * 16, geo.mask[s0 + v], _mm512_add_ps(acc[0][cb][v], acc[1][cb][v]));
        });
      });
    }
}

template <int CB, int NV>
void input_grad_channels(const Conv2dArgs& a, const RowGeo& geo, const float* gy, const float* w, float* gx,
                         int64_t count) {
  const int64_t KK = a.kH * a.kW, HW = a.H * a.W;
  int64_t c = 0;
  for (; c + CB <= count; c += CB) input_grad_block<CB, NV>(a, geo, gy, w + c * KK, gx + c * HW);
  if constexpr (CB > 1)
    if (c < count) input_grad_channels<CB / 2, NV>(a, geo, gy, w + c * KK, gx + c * HW, count - c);
}

void input_grad_avx512(const Conv2dArgs& a, const float* gy, const float* w, float* gx) {
  const RowGeo geo = row_geo(a.W, a.W_out, a.kW, a.pad_w, -a.dil_w);
  const int64_t G = a.groups, cg = a.C_in / G, og = a.C_out / G, KK = a.kH * a.kW, CKK = cg * KK, HW = a.H * a.W,
                L = a.H_out * a.W_out;
  constexpr int64_t cb = 4;
  const int64_t blocks = (cg + cb - 1) / cb;
  parallel_for(0, a.N * G * blocks, grain_for(cb * og * L * KK), [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t n = t / (G * blocks), g = t / blocks % G, c0 = t % blocks * cb, count = std::min(cb, cg - c0);
      const float* gn = gy + (n * a.C_out + g * og) * L;
      const float* wg = w + g * og * CKK + c0 * KK;
      float* xn = gx + (n * a.C_in + g * cg + c0) * HW;
      if (geo.nv == 1) input_grad_channels<4, 1>(a, geo, gn, wg, xn, count);
      else if (geo.nv == 2) input_grad_channels<4, 2>(a, geo, gn, wg, xn, count);
      else input_grad_channels<4, 3>(a, geo, gn, wg, xn, count);
    }
  });
}
#endif  // __AVX512F__

}  // namespace

template <class T>
bool direct_vectorized() {
#if defined(__AVX512F__)
  return std::is_same_v<T, float>;
#else
  return false;
#endif
}

template <class T>
void direct_forward(const Conv2dArgs& a, const T* x, const T* w, const T* bias, T* y) {
#if defined(__AVX512F__)
  if constexpr (std::is_same_v<T, float>) return forward_avx512(a, x, w, bias, y);
#endif
  forward_plain(a, x, w, bias, y);
}

template <class T>
void direct_backward(const Conv2dArgs& a, const T* gy, const T* x, const T* w, T* gx, T* gw, T* gb) {
#if defined(__AVX512F__)
  if constexpr (std::is_same_v<T, float>) {
    if (gw) weight_grad_avx512(a, gy, x, gw, gb);
    if (gx) input_grad_avx512(a, gy, w, gx);
    return;
  }
#endif
  if (gw) weight_grad_plain(a, gy, x, gw, gb);
  if (gx) input_grad_plain(a, gy, w, gx);
}

template bool direct_vectorized<float>();
template bool direct_vectorized<double>();
template void direct_forward<float>(const Conv2dArgs&, const float*, const float*, const float*, float*);
template void direct_forward<double>(const Conv2dArgs&, const double*, const double*, const double*, double*);
template void direct_backward<float>(const Conv2dArgs&, const float*, const float*, const float*, float*, float*,
                                     float*);
template void direct_backward<double>(const Conv2dArgs&, const double*, const double*, const double*, double*,
                                      double*, double*);

}  // namespace gr::native
