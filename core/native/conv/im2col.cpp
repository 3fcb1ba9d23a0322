// im2col / col2im over a minibatch chunk (see im2col.h), OpenMP-parallel.
#include "core/native/conv/im2col.h"

#include <algorithm>
#include <cstring>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "core/native/conv/conv2d_index.h"
#include "core/parallel.h"

namespace gr::native {

namespace {

// dst[0, n) = src[0, n) and dst[0, n) += src[0, n) for the short rows of a convolution
// window (often fewer than 16 elements): AVX-512 masked moves where available.
template <class T>
inline void copy_row(T* dst, const T* src, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = src[i];
}
template <class T>
inline void add_row(T* dst, const T* src, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] += src[i];
}
#if defined(__AVX512F__)
template <>
inline void copy_row<float>(float* dst, const float* src, int64_t n) {
  for (; n >= 16; n -= 16, dst += 16, src += 16) _mm512_storeu_ps(dst, _mm512_loadu_ps(src));
  const __mmask16 m = static_cast<__mmask16>((1u << n) - 1);
  _mm512_mask_storeu_ps(dst, m, _mm512_maskz_loadu_ps(m, src));
}
template <>
inline void add_row<float>(float* dst, const float* src, int64_t n) {
  for (; n >= 16; n -= 16, dst += 16, src += 16)
    _mm512_storeu_ps(dst, _mm512_add_ps(_mm512_loadu_ps(dst), _mm512_loadu_ps(src)));
  const __mmask16 m = static_cast<__mmask16>((1u << n) - 1);
  _mm512_mask_storeu_ps(dst, m, _mm512_add_ps(_mm512_maskz_loadu_ps(m, dst), _mm512_maskz_loadu_ps(m, src)));
}
template <>
inline void copy_row<double>(double* dst, const double* src, int64_t n) {
  for (; n >= 8; n -= 8, dst += 8, src += 8) _mm512_storeu_pd(dst, _mm512_loadu_pd(src));
  const __mmask8 m = static_cast<__mmask8>((1u << n) - 1);
  _mm512_mask_storeu_pd(dst, m, _mm512_maskz_loadu_pd(m, src));
}
template <>
inline void add_row<double>(double* dst, const double* src, int64_t n) {
  for (; n >= 8; n -= 8, dst += 8, src += 8)
    _mm512_storeu_pd(dst, _mm512_add_pd(_mm512_loadu_pd(dst), _mm512_loadu_pd(src)));
  const __mmask8 m = static_cast<__mmask8>((1u << n) - 1);
  _mm512_mask_storeu_pd(dst, m, _mm512_add_pd(_mm512_maskz_loadu_pd(m, dst), _mm512_maskz_loadu_pd(m, src)));
}
#endif

// Rows (or planes) per parallel chunk so each chunk moves about kGrainSize elements.
int64_t grain_for(int64_t elements_per_item) { return std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, elements_per_item)); }

}  // namespace

template <class T>
void im2col(const Conv2dArgs& a, const T* input, int64_t n0, int64_t nb, int64_t c0, int64_t cg, T* cols) {
  const int64_t L = a.H_out * a.W_out, P = nb * L, KK = a.kH * a.kW, HW = a.H * a.W;
  parallel_for(0, cg * KK, grain_for(P), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t c = r / KK, i = (r % KK) / a.kW, j = r % a.kW;
      const int64_t off_h = i * a.dil_h - a.pad_h, off_w = j * a.dil_w - a.pad_w;
      const ConvValidRange hr = conv_valid_range(off_h, a.stride_h, a.H, a.H_out);
      const ConvValidRange wr = conv_valid_range(off_w, a.stride_w, a.W, a.W_out);
      T* dst = cols + r * P;
      for (int64_t n = 0; n < nb; ++n) {
        const T* plane = input + ((n0 + n) * a.C_in + c0 + c) * HW;
        T* d = dst + n * L;
        std::fill(d, d + hr.lo * a.W_out, T(0));
        for (int64_t ho = hr.lo; ho < hr.hi; ++ho) {
          T* drow = d + ho * a.W_out;
          const T* srow = plane + (ho * a.stride_h + off_h) * a.W;  // srow[wo * sw + off_w] is in the row
          std::fill(drow, drow + wr.lo, T(0));
          if (a.stride_w == 1) {
            copy_row(drow + wr.lo, srow + wr.lo + off_w, wr.hi - wr.lo);
          } else {
            for (int64_t wo = wr.lo; wo < wr.hi; ++wo) drow[wo] = srow[wo * a.stride_w + off_w];
          }
          std::fill(drow + wr.hi, drow + a.W_out, T(0));
        }
        std::fill(d + hr.hi * a.W_out, d + L, T(0));
      }
    }
  });
}

template <class T>
void col2im_add(const Conv2dArgs& a, const T* cols, int64_t n0, int64_t nb, int64_t c0, int64_t cg, T* grad_input) {
  const int64_t L = a.H_out * a.W_out, P = nb * L, KK = a.kH * a.kW, HW = a.H * a.W;
  parallel_for(0, nb * cg, grain_for(KK * L), [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t c = p / nb, n = p % nb;  // channel-major: a cols row streams across images
      T* plane = grad_input + ((n0 + n) * a.C_in + c0 + c) * HW;
      for (int64_t i = 0; i < a.kH; ++i) {
        const int64_t off_h = i * a.dil_h - a.pad_h;
        const ConvValidRange hr = conv_valid_range(off_h, a.stride_h, a.H, a.H_out);
        for (int64_t j = 0; j < a.kW; ++j) {
          const int64_t off_w = j * a.dil_w - a.pad_w;
          const ConvValidRange wr = conv_valid_range(off_w, a.stride_w, a.W, a.W_out);
          const T* src = cols + (c * KK + i * a.kW + j) * P + n * L;
          for (int64_t ho = hr.lo; ho < hr.hi; ++ho) {
            const T* srow = src + ho * a.W_out;
            T* drow = plane + (ho * a.stride_h + off_h) * a.W;
            if (a.stride_w == 1) {
              add_row(drow + wr.lo + off_w, srow + wr.lo, wr.hi - wr.lo);
            } else {
              for (int64_t wo = wr.lo; wo < wr.hi; ++wo) drow[wo * a.stride_w + off_w] += srow[wo];
            }
          }
        }
      }
    }
  });
}

template void im2col<float>(const Conv2dArgs&, const float*, int64_t, int64_t, int64_t, int64_t, float*);
template void im2col<double>(const Conv2dArgs&, const double*, int64_t, int64_t, int64_t, int64_t, double*);
template void col2im_add<float>(const Conv2dArgs&, const float*, int64_t, int64_t, int64_t, int64_t, float*);
template void col2im_add<double>(const Conv2dArgs&, const double*, int64_t, int64_t, int64_t, int64_t, double*);

}  // namespace gr::native
