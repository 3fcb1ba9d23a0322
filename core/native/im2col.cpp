// im2col / col2im over a minibatch chunk (see im2col.h), OpenMP-parallel.
#include "core/native/im2col.h"

#include <algorithm>
#include <cstring>

#include "core/parallel.h"

namespace gr::native {

namespace {

// The output indices o in [0, n_out) whose input index o * stride + offset lies in [0, size).
struct ValidRange {
  int64_t lo, hi;
};
ValidRange valid_range(int64_t offset, int64_t stride, int64_t size, int64_t n_out) {
  int64_t lo = offset < 0 ? (-offset + stride - 1) / stride : 0;
  int64_t hi = size - 1 - offset >= 0 ? (size - 1 - offset) / stride + 1 : 0;
  hi = std::min(hi, n_out);
  return {std::min(lo, hi), hi};
}

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
      const ValidRange hr = valid_range(off_h, a.stride_h, a.H, a.H_out);
      const ValidRange wr = valid_range(off_w, a.stride_w, a.W, a.W_out);
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
            for (int64_t wo = wr.lo; wo < wr.hi; ++wo) drow[wo] = srow[wo + off_w];
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
      const int64_t n = p / cg, c = p % cg;
      T* plane = grad_input + ((n0 + n) * a.C_in + c0 + c) * HW;
      for (int64_t i = 0; i < a.kH; ++i) {
        const int64_t off_h = i * a.dil_h - a.pad_h;
        const ValidRange hr = valid_range(off_h, a.stride_h, a.H, a.H_out);
        for (int64_t j = 0; j < a.kW; ++j) {
          const int64_t off_w = j * a.dil_w - a.pad_w;
          const ValidRange wr = valid_range(off_w, a.stride_w, a.W, a.W_out);
          const T* src = cols + (c * KK + i * a.kW + j) * P + n * L;
          for (int64_t ho = hr.lo; ho < hr.hi; ++ho) {
            const T* srow = src + ho * a.W_out;
            T* drow = plane + (ho * a.stride_h + off_h) * a.W;
            if (a.stride_w == 1) {
              for (int64_t wo = wr.lo; wo < wr.hi; ++wo) drow[wo + off_w] += srow[wo];
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
