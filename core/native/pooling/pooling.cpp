// 2-D max/average/adaptive-average pooling: argument checks, output shapes and the CPU
// kernels, which run in parallel over (N, C) planes with one plain loop nest per plane (the
// per-element arithmetic they share with cuda_kernels/pooling.cu is in pooling.h).
#include "core/native/pooling/pooling.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "core/factory.h"
#include "core/native/copy/copy.h"
#include "core/parallel.h"

namespace gr::native {

GR_DEFINE_DISPATCH(MaxPool2dFn, max_pool2d_stub);
GR_DEFINE_DISPATCH(MaxPool2dBackwardFn, max_pool2d_backward_stub);
GR_DEFINE_DISPATCH(AvgPool2dFn, avg_pool2d_stub);
GR_DEFINE_DISPATCH(AvgPool2dBackwardFn, avg_pool2d_backward_stub);
GR_DEFINE_DISPATCH(AdaptiveAvgPool2dFn, adaptive_avg_pool2d_stub);
GR_DEFINE_DISPATCH(AdaptiveAvgPool2dBackwardFn, adaptive_avg_pool2d_backward_stub);

namespace {

// (H, W) from a list of one value (both dims) or two.
std::pair<int64_t, int64_t> pair_arg(const char* op, const char* name, IntArrayRef v) {
  GR_CHECK(v.size() == 1 || v.size() == 2, op, ": ", name, " must be one value or two (H, W), got ", v);
  return {v[0], v.size() == 2 ? v[1] : v[0]};
}

// Planes, H, W of an input [N, C, H, W] or [C, H, W], after the common checks.
void set_planes(const char* op, const Tensor& input, Pool2dGeometry& g) {
  GR_CHECK(input.defined(), op, ": input is undefined");
  GR_CHECK(input.dim() == 3 || input.dim() == 4, op, ": expected a 3-D [C, H, W] or 4-D [N, C, H, W] input, got shape ",
           input.sizes());
  GR_CHECK(input.scalar_type() == kFloat32 || input.scalar_type() == kFloat64, op,
           ": expected a float32 or float64 input, got ", input.scalar_type());
  for (int64_t d = input.dim() - 3; d < input.dim(); ++d)
    GR_CHECK(input.size(d) > 0, op, ": expected non-empty C, H and W, got input shape ", input.sizes());
  g.H = input.size(-2);
  g.W = input.size(-1);
  g.planes = input.numel() / (g.H * g.W);
}

std::vector<int64_t> output_sizes(const Tensor& input, const Pool2dGeometry& g) {
  std::vector<int64_t> sizes = input.sizes().vec();
  sizes[sizes.size() - 2] = g.oH;
  sizes[sizes.size() - 1] = g.oW;
  return sizes;
}

int64_t plane_grain(int64_t work_per_plane) { return std::max<int64_t>(1, kGrainSize / std::max<int64_t>(work_per_plane, 1)); }

// ---- max ----

// Output columns [lo, hi) whose tap kw (at column ow * sW - pW + kw * dW) lies in [0, W).
inline std::pair<int64_t, int64_t> tap_columns(const Pool2dGeometry& g, int64_t kw) {
  const int64_t first = g.pW - kw * g.dW;          // ow * sW >= first
  const int64_t last = g.W - 1 + g.pW - kw * g.dW;  // ow * sW <= last
  const int64_t lo = first <= 0 ? 0 : (first + g.sW - 1) / g.sW;
  const int64_t hi = last < 0 ? 0 : std::min(g.oW, last / g.sW + 1);
  return {lo, std::max(lo, hi)};
}

// Running maxima of n outputs against one tap: x[k * stride] is output k's tap value, at
// input index base + k * step. Selects rather than branches (which tap wins is
// data-dependent); restrict lets the loop vectorise.
template <class T>
inline void max_row_update(const T* __restrict x, int64_t stride, T* __restrict y, int64_t* __restrict idx, int64_t n,
                           int64_t base, int64_t step) {
  for (int64_t k = 0; k < n; ++k) {
    const T v = x[k * stride];
    const bool take = (v > y[k]) | (v != v);  // NaN wins, as in torch
    y[k] = take ? v : y[k];
    idx[k] = take ? base + k * step : idx[k];
  }
}

// One output row at a time, taps outermost: each tap updates a whole row of running maxima,
// visiting every window's taps in the same (row, column) order as a per-window loop, so
// ties (first maximum wins) and NaN resolve as in torch. With a horizontal stride of 2 each
// input row is first split into its even and odd columns, so every tap reads contiguous
// values and the update loop vectorises (strided reads kept it scalar: 3x3/2 pooling was
// 8x slower than its backward).
template <class T>
void max_pool2d_kernel(const T* in, T* out, int64_t* indices, const Pool2dGeometry& geometry) {
  const Pool2dGeometry g = geometry;  // a local copy: the stores below cannot alias it
  const bool split = g.sW == 2;
  std::vector<std::pair<int64_t, int64_t>> cols;  // tap_columns of each kw (divisions, once)
  for (int64_t kw = 0; kw < g.kW; ++kw) cols.push_back(tap_columns(g, kw));
  parallel_for(0, g.planes, plane_grain(g.oH * g.oW * g.kH * g.kW), [&](int64_t p0, int64_t p1) {
    std::vector<T> halves(split ? static_cast<size_t>(g.W + 2) : 0);
    T* even = halves.data();
    T* odd = even + (g.W + 1) / 2;
    for (int64_t p = p0; p < p1; ++p) {
      const T* x = in + p * g.H * g.W;
      for (int64_t oh = 0; oh < g.oH; ++oh) {
        T* y = out + (p * g.oH + oh) * g.oW;
        int64_t* idx = indices + (p * g.oH + oh) * g.oW;
        int64_t h0 = oh * g.sH - g.pH;
        const int64_t h1 = std::min(h0 + (g.kH - 1) * g.dH + 1, g.H);
        while (h0 < 0) h0 += g.dH;
        for (int64_t ow = 0; ow < g.oW; ++ow) {  // torch's start: -inf at the first valid tap
          int64_t w0 = ow * g.sW - g.pW;
          while (w0 < 0) w0 += g.dW;
          y[ow] = -std::numeric_limits<T>::infinity();
          idx[ow] = h0 * g.W + w0;
        }
        for (int64_t h = h0; h < h1; h += g.dH) {
          const T* row = x + h * g.W;
          if (split) {
            for (int64_t j = 0; j < g.W / 2; ++j) even[j] = row[2 * j], odd[j] = row[2 * j + 1];
            if (g.W % 2) even[g.W / 2] = row[g.W - 1];
          }
          for (int64_t kw = 0; kw < g.kW; ++kw) {
            const auto [lo, hi] = cols[static_cast<size_t>(kw)];
            const int64_t col = -g.pW + kw * g.dW + lo * g.sW;  // input column of tap kw for ow = lo
            const int64_t base = h * g.W + col;
            if (split) max_row_update((col % 2 ? odd : even) + col / 2, 1, y + lo, idx + lo, hi - lo, base, 2);
            else if (g.sW == 1) max_row_update(row + col, 1, y + lo, idx + lo, hi - lo, base, 1);
            else max_row_update(row + col, g.sW, y + lo, idx + lo, hi - lo, base, g.sW);
          }
        }
      }
    }
  });
}

#if defined(__AVX512F__)
// 2x2 windows with stride 2, no padding or dilation, floor mode, planes indexable in int32.
bool is_plain_2x2(const Pool2dGeometry& g) {
  return g.kH == 2 && g.kW == 2 && g.sH == 2 && g.sW == 2 && g.pH == 0 && g.pW == 0 && g.dH == 1 && g.dW == 1 &&
         g.oH == g.H / 2 && g.oW == g.W / 2 && g.H * g.W < (int64_t{1} << 31);
}

// The common 2x2 window, stride 2, no padding or dilation (every CNN's pooling layer), for
// float32 with AVX-512: 16 outputs per step; taps in the general kernel's order with the
// same tie (first maximum) and NaN rules, so values and indices are identical to it.
void max_pool2x2_avx512(const float* in, float* out, int64_t* indices, const Pool2dGeometry& geometry) {
  const int64_t H = geometry.H, W = geometry.W, oH = geometry.oH, oW = geometry.oW;
  const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  const __m512i odd = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
  parallel_for(0, geometry.planes, plane_grain(oH * oW * 4), [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const float* x = in + p * H * W;
      for (int64_t oh = 0; oh < oH; ++oh) {
        float* y = out + (p * oH + oh) * oW;
        int64_t* idx = indices + (p * oH + oh) * oW;
        const int32_t row = static_cast<int32_t>(2 * oh * W);  // plane index, < 2^31 (checked)
        for (int64_t ow = 0; ow < oW; ow += 16) {
          const int64_t n = std::min<int64_t>(16, oW - ow);
          const auto m = static_cast<__mmask16>((1u << n) - 1);
          const auto m_lo = static_cast<__mmask16>(n >= 8 ? 0xffff : (1u << (2 * n)) - 1);
          const auto m_hi = static_cast<__mmask16>(n > 8 ? (1u << (2 * (n - 8))) - 1 : 0);
          const float* a = x + row + 2 * ow;  // top row of the windows
          const float* b = a + W;             // bottom row
          const __m512 a0 = _mm512_maskz_loadu_ps(m_lo, a), a1 = _mm512_maskz_loadu_ps(m_hi, a + 16);
          const __m512 b0 = _mm512_maskz_loadu_ps(m_lo, b), b1 = _mm512_maskz_loadu_ps(m_hi, b + 16);
          const __m512i base = _mm512_add_epi32(_mm512_set1_epi32(row + 2 * static_cast<int32_t>(ow)), even);
          __m512 best = _mm512_permutex2var_ps(a0, even, a1);
          __m512i at = base;
          auto tap = [&](__m512 v, int32_t offset) {
            const __mmask16 take = _mm512_cmp_ps_mask(v, best, _CMP_GT_OQ) | _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
            best = _mm512_mask_mov_ps(best, take, v);
            at = _mm512_mask_mov_epi32(at, take, _mm512_add_epi32(base, _mm512_set1_epi32(offset)));
          };
          tap(_mm512_permutex2var_ps(a0, odd, a1), 1);
          tap(_mm512_permutex2var_ps(b0, even, b1), static_cast<int32_t>(W));
          tap(_mm512_permutex2var_ps(b0, odd, b1), static_cast<int32_t>(W) + 1);
          _mm512_mask_storeu_ps(y + ow, m, best);
          _mm512_mask_storeu_epi64(idx + ow, static_cast<__mmask8>(m & 0xff),
                                   _mm512_cvtepi32_epi64(_mm512_castsi512_si256(at)));
          _mm512_mask_storeu_epi64(idx + ow + 8, static_cast<__mmask8>(m >> 8),
                                   _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(at, 1)));
        }
      }
    }
  });
}

// Backward of the 2x2/stride-2 window: every input belongs to at most one window, so each
// input row pair is written once (the gradient where the index points, zero elsewhere),
// instead of zero-filling the plane and scattering into it.
void max_pool2x2_backward_avx512(const float* grad_out, const int64_t* indices, float* grad_in,
                                 const Pool2dGeometry& geometry) {
  const int64_t H = geometry.H, W = geometry.W, oH = geometry.oH, oW = geometry.oW;
  const __m512i lane2 = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  // Interleave a (even columns) and b (odd columns): [a0 b0 a1 b1 ...] for lanes 0-7 and 8-15.
  const __m512i mix_lo = _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
  const __m512i mix_hi = _mm512_set_epi32(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8);
  const auto W32 = static_cast<int32_t>(W);
  parallel_for(0, geometry.planes, plane_grain(H * W), [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      float* x = grad_in + p * H * W;
      for (int64_t oh = 0; oh < oH; ++oh) {
        const float* g = grad_out + (p * oH + oh) * oW;
        const int64_t* idx = indices + (p * oH + oh) * oW;
        float* top = x + 2 * oh * W;
        float* bottom = top + W;
        const auto row = static_cast<int32_t>(2 * oh * W);
        for (int64_t ow = 0; ow < oW; ow += 16) {
          const int64_t n = std::min<int64_t>(16, oW - ow);
          const auto m = static_cast<__mmask16>((1u << n) - 1);
          const __m512 gv = _mm512_maskz_loadu_ps(m, g + ow);
          const __m256i i_lo = _mm512_cvtepi64_epi32(_mm512_maskz_loadu_epi64(static_cast<__mmask8>(m), idx + ow));
          const __m256i i_hi = _mm512_cvtepi64_epi32(_mm512_maskz_loadu_epi64(static_cast<__mmask8>(m >> 8), idx + ow + 8));
          const __m512i at = _mm512_inserti64x4(_mm512_castsi256_si512(i_lo), i_hi, 1);
          // Offset of the chosen tap inside its window: 0, 1, W or W + 1.
          const __m512i off = _mm512_sub_epi32(at, _mm512_add_epi32(_mm512_set1_epi32(row + 2 * static_cast<int32_t>(ow)), lane2));
          auto pick = [&](int32_t o) { return _mm512_maskz_mov_ps(_mm512_cmpeq_epi32_mask(off, _mm512_set1_epi32(o)) & m, gv); };
          const __m512 v00 = pick(0), v01 = pick(1), v10 = pick(W32), v11 = pick(W32 + 1);
          const int64_t cols = 2 * n;  // input columns this step covers
          const auto s_lo = static_cast<__mmask16>(cols >= 16 ? 0xffff : (1u << cols) - 1);
          const auto s_hi = static_cast<__mmask16>(cols > 16 ? (1u << (cols - 16)) - 1 : 0);
          _mm512_mask_storeu_ps(top + 2 * ow, s_lo, _mm512_permutex2var_ps(v00, mix_lo, v01));
          _mm512_mask_storeu_ps(top + 2 * ow + 16, s_hi, _mm512_permutex2var_ps(v00, mix_hi, v01));
          _mm512_mask_storeu_ps(bottom + 2 * ow, s_lo, _mm512_permutex2var_ps(v10, mix_lo, v11));
          _mm512_mask_storeu_ps(bottom + 2 * ow + 16, s_hi, _mm512_permutex2var_ps(v10, mix_hi, v11));
        }
        if (W > 2 * oW) top[W - 1] = bottom[W - 1] = 0.0f;  // odd width: the last column is in no window
      }
      if (H > 2 * oH) std::fill(x + 2 * oH * W, x + H * W, 0.0f);  // odd height: the last row too
    }
  });
}
#endif

template <class T>
void max_pool2d_backward_kernel(const T* grad_out, const int64_t* indices, T* grad_in, const Pool2dGeometry& g) {
  const int64_t in_plane = g.H * g.W, out_plane = g.oH * g.oW;
  parallel_for(0, g.planes, plane_grain(in_plane + out_plane), [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const T* go = grad_out + p * out_plane;
      const int64_t* idx = indices + p * out_plane;
      T* gi = grad_in + p * in_plane;
      std::fill(gi, gi + in_plane, T(0));
      for (int64_t k = 0; k < out_plane; ++k) gi[idx[k]] += go[k];
    }
  });
}

// ---- average ----

template <class T>
void avg_pool2d_kernel(const T* in, T* out, const Pool2dGeometry& g, bool count_include_pad) {
  const int64_t H = g.H, W = g.W, oH = g.oH, oW = g.oW;
  parallel_for(0, g.planes, plane_grain(oH * oW * g.kH * g.kW), [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const T* x = in + p * H * W;
      T* y = out + p * oH * oW;
      for (int64_t oh = 0; oh < oH; ++oh)
        for (int64_t ow = 0; ow < oW; ++ow) y[oh * oW + ow] = avg_pool2d_at(x, g, oh, ow, count_include_pad);
    }
  });
}

template <class T>
void avg_pool2d_backward_kernel(const T* grad_out, T* grad_in, const Pool2dGeometry& g, bool count_include_pad) {
  const int64_t H = g.H, W = g.W, oH = g.oH, oW = g.oW;
  parallel_for(0, g.planes, plane_grain(H * W + oH * oW * g.kH * g.kW), [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const T* go = grad_out + p * oH * oW;
      T* gi = grad_in + p * H * W;
      std::fill(gi, gi + H * W, T(0));
      for (int64_t oh = 0; oh < oH; ++oh) {
        for (int64_t ow = 0; ow < oW; ++ow) {
          const AvgWindow win = avg_window(g, oh, ow, count_include_pad);
          if (win.h0 >= win.h1 || win.w0 >= win.w1) continue;
          const T share = go[oh * oW + ow] / static_cast<T>(win.divisor);
          for (int64_t h = win.h0; h < win.h1; ++h)
            for (int64_t w = win.w0; w < win.w1; ++w) gi[h * W + w] += share;
        }
      }
    }
  });
}

// ---- adaptive average ----

template <class T>
void adaptive_avg_pool2d_kernel(const T* in, T* out, const Pool2dGeometry& g) {
  const int64_t H = g.H, W = g.W, oH = g.oH, oW = g.oW;
  parallel_for(0, g.planes, plane_grain(H * W + oH * oW), [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const T* x = in + p * H * W;
      T* y = out + p * oH * oW;
      for (int64_t oh = 0; oh < oH; ++oh)
        for (int64_t ow = 0; ow < oW; ++ow) y[oh * oW + ow] = adaptive_avg_pool2d_at(x, g, oh, ow);
    }
  });
}

template <class T>
void adaptive_avg_pool2d_backward_kernel(const T* grad_out, T* grad_in, const Pool2dGeometry& g) {
  const int64_t H = g.H, W = g.W, oH = g.oH, oW = g.oW;
  parallel_for(0, g.planes, plane_grain(2 * H * W + oH * oW), [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const T* go = grad_out + p * oH * oW;
      T* gi = grad_in + p * H * W;
      std::fill(gi, gi + H * W, T(0));
      for (int64_t oh = 0; oh < oH; ++oh) {
        const int64_t h0 = adaptive_start(oh, H, oH), h1 = adaptive_end(oh, H, oH);
        for (int64_t ow = 0; ow < oW; ++ow) {
          const int64_t w0 = adaptive_start(ow, W, oW), w1 = adaptive_end(ow, W, oW);
          const T share = go[oh * oW + ow] / static_cast<T>((h1 - h0) * (w1 - w0));
          for (int64_t h = h0; h < h1; ++h)
            for (int64_t w = w0; w < w1; ++w) gi[h * W + w] += share;
        }
      }
    }
  });
}

// ---- CPU entry points ----

void max_pool2d_cpu(const void* in, void* out, int64_t* indices, const Pool2dGeometry& g, ScalarType t) {
#if defined(__AVX512F__)
  if (t == kFloat32 && is_plain_2x2(g))
    return max_pool2x2_avx512(static_cast<const float*>(in), static_cast<float*>(out), indices, g);
#endif
  dispatch_floating(t, "max_pool2d", [&]<class T>() {
    max_pool2d_kernel(static_cast<const T*>(in), static_cast<T*>(out), indices, g);
  });
}
void max_pool2d_backward_cpu(const void* go, const int64_t* indices, void* gi, const Pool2dGeometry& g, ScalarType t) {
#if defined(__AVX512F__)
  if (t == kFloat32 && is_plain_2x2(g))
    return max_pool2x2_backward_avx512(static_cast<const float*>(go), indices, static_cast<float*>(gi), g);
#endif
  dispatch_floating(t, "max_pool2d_backward", [&]<class T>() {
    max_pool2d_backward_kernel(static_cast<const T*>(go), indices, static_cast<T*>(gi), g);
  });
}
void avg_pool2d_cpu(const void* in, void* out, const Pool2dGeometry& g, bool count_include_pad, ScalarType t) {
  dispatch_floating(t, "avg_pool2d", [&]<class T>() {
    avg_pool2d_kernel(static_cast<const T*>(in), static_cast<T*>(out), g, count_include_pad);
  });
}
void avg_pool2d_backward_cpu(const void* go, void* gi, const Pool2dGeometry& g, bool count_include_pad, ScalarType t) {
  dispatch_floating(t, "avg_pool2d_backward", [&]<class T>() {
    avg_pool2d_backward_kernel(static_cast<const T*>(go), static_cast<T*>(gi), g, count_include_pad);
  });
}
// An output as large as the input averages one value per window: a copy both ways (a CNN's
// global pooling of maps that are already 1x1, where the per-plane loops cost 8x PyTorch's time).
bool same_size(const Pool2dGeometry& g) { return g.oH == g.H && g.oW == g.W; }

void adaptive_avg_pool2d_cpu(const void* in, void* out, const Pool2dGeometry& g, ScalarType t) {
  dispatch_floating(t, "adaptive_avg_pool2d", [&]<class T>() {
    if (same_size(g)) return (void)std::copy_n(static_cast<const T*>(in), g.planes * g.H * g.W, static_cast<T*>(out));
    adaptive_avg_pool2d_kernel(static_cast<const T*>(in), static_cast<T*>(out), g);
  });
}
void adaptive_avg_pool2d_backward_cpu(const void* go, void* gi, const Pool2dGeometry& g, ScalarType t) {
  dispatch_floating(t, "adaptive_avg_pool2d_backward", [&]<class T>() {
    if (same_size(g)) return (void)std::copy_n(static_cast<const T*>(go), g.planes * g.H * g.W, static_cast<T*>(gi));
    adaptive_avg_pool2d_backward_kernel(static_cast<const T*>(go), static_cast<T*>(gi), g);
  });
}

}  // namespace

GR_REGISTER_KERNEL(max_pool2d_stub, kCPU, &max_pool2d_cpu);
GR_REGISTER_KERNEL(max_pool2d_backward_stub, kCPU, &max_pool2d_backward_cpu);
GR_REGISTER_KERNEL(avg_pool2d_stub, kCPU, &avg_pool2d_cpu);
GR_REGISTER_KERNEL(avg_pool2d_backward_stub, kCPU, &avg_pool2d_backward_cpu);
GR_REGISTER_KERNEL(adaptive_avg_pool2d_stub, kCPU, &adaptive_avg_pool2d_cpu);
GR_REGISTER_KERNEL(adaptive_avg_pool2d_backward_stub, kCPU, &adaptive_avg_pool2d_backward_cpu);

int64_t pool_output_size(int64_t in, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation, bool ceil_mode) {
  const int64_t num = in + 2 * pad - dilation * (kernel - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  // Division rounding toward negative infinity.
  int64_t out = (num >= 0 ? num / stride : -((-num + stride - 1) / stride)) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;  // the last window must start inside the input
  return out;
}

Pool2dGeometry pool2d_geometry(const char* op, const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                               IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  Pool2dGeometry g;
  set_planes(op, input, g);
  std::tie(g.kH, g.kW) = pair_arg(op, "kernel_size", kernel_size);
  std::tie(g.sH, g.sW) = stride.empty() ? std::make_pair(g.kH, g.kW) : pair_arg(op, "stride", stride);
  std::tie(g.pH, g.pW) = pair_arg(op, "padding", padding);
  std::tie(g.dH, g.dW) = pair_arg(op, "dilation", dilation);
  GR_CHECK(g.kH > 0 && g.kW > 0, op, ": kernel_size must be positive, got ", kernel_size);
  GR_CHECK(g.sH > 0 && g.sW > 0, op, ": stride must be positive, got ", stride);
  GR_CHECK(g.dH > 0 && g.dW > 0, op, ": dilation must be positive, got ", dilation);
  GR_CHECK(g.pH >= 0 && g.pW >= 0, op, ": padding must be non-negative, got ", padding);
  GR_CHECK(g.pH <= g.kH / 2 && g.pW <= g.kW / 2, op, ": padding must be at most half the kernel size, got padding ",
           padding, " for kernel_size ", kernel_size);
  g.oH = pool_output_size(g.H, g.kH, g.sH, g.pH, g.dH, ceil_mode);
  g.oW = pool_output_size(g.W, g.kW, g.sW, g.pW, g.dW, ceil_mode);
  GR_CHECK(g.oH >= 1 && g.oW >= 1, op, ": input of shape ", input.sizes(), " is too small for kernel_size ",
           kernel_size, ", dilation ", dilation, " and padding ", padding, " (output would be ", g.oH, "x", g.oW, ")");
  return g;
}

Pool2dGeometry adaptive_pool2d_geometry(const char* op, const Tensor& input, IntArrayRef output_size) {
  Pool2dGeometry g;
  set_planes(op, input, g);
  std::tie(g.oH, g.oW) = pair_arg(op, "output_size", output_size);
  GR_CHECK(g.oH >= 0 && g.oW >= 0, op, ": output_size must be non-negative, got ", output_size);
  g.kH = g.kW = g.sH = g.sW = 0;  // not used: the windows vary
  return g;
}

std::pair<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, const Pool2dGeometry& g) {
  Tensor in = contiguous(input);
  std::vector<int64_t> sizes = output_sizes(input, g);
  Tensor out = empty(sizes, input.options());
  Tensor indices = empty(sizes, TensorOptions(kInt64).device(input.device()));
  if (out.numel() > 0)
    max_pool2d_stub(input.device(), in.data_ptr(), out.data_ptr(), indices.data_ptr<int64_t>(), g,
                    input.scalar_type());
  return {out, indices};
}

Tensor max_pool2d_backward(const Tensor& grad_out, const Tensor& indices, IntArrayRef input_sizes,
                           const Pool2dGeometry& g) {
  Tensor go = contiguous(grad_out), idx = contiguous(indices);
  Tensor gi = empty(input_sizes, grad_out.options());
  if (gi.numel() > 0)
    max_pool2d_backward_stub(grad_out.device(), go.data_ptr(), idx.data_ptr<int64_t>(), gi.data_ptr(), g,
                             grad_out.scalar_type());
  return gi;
}

Tensor avg_pool2d(const Tensor& input, const Pool2dGeometry& g, bool count_include_pad) {
  Tensor in = contiguous(input);
  Tensor out = empty(output_sizes(input, g), input.options());
  if (out.numel() > 0)
    avg_pool2d_stub(input.device(), in.data_ptr(), out.data_ptr(), g, count_include_pad, input.scalar_type());
  return out;
}

Tensor avg_pool2d_backward(const Tensor& grad_out, IntArrayRef input_sizes, const Pool2dGeometry& g,
                           bool count_include_pad) {
  Tensor go = contiguous(grad_out);
  Tensor gi = empty(input_sizes, grad_out.options());
  if (gi.numel() > 0)
    avg_pool2d_backward_stub(grad_out.device(), go.data_ptr(), gi.data_ptr(), g, count_include_pad,
                             grad_out.scalar_type());
  return gi;
}

Tensor adaptive_avg_pool2d(const Tensor& input, const Pool2dGeometry& g) {
  Tensor in = contiguous(input);
  Tensor out = empty(output_sizes(input, g), input.options());
  if (out.numel() > 0)
    adaptive_avg_pool2d_stub(input.device(), in.data_ptr(), out.data_ptr(), g, input.scalar_type());
  return out;
}

Tensor adaptive_avg_pool2d_backward(const Tensor& grad_out, IntArrayRef input_sizes, const Pool2dGeometry& g) {
  Tensor go = contiguous(grad_out);
  Tensor gi = empty(input_sizes, grad_out.options());
  if (gi.numel() > 0)
    adaptive_avg_pool2d_backward_stub(grad_out.device(), go.data_ptr(), gi.data_ptr(), g, grad_out.scalar_type());
  return gi;
}

}  // namespace gr::native
