// The index helpers of core/native/conv/conv2d_index.h, shared by the CPU im2col and the CUDA
// im2col/col2im kernels: conv_output_index inverts conv_input_index, conv_valid_range is the
// set brute force finds, and col2im written as a gather over conv_output_index (the CUDA
// kernel's formulation) gives the CPU col2im_add's result bit for bit.
#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "core/native/conv/conv2d_index.h"
#include "core/native/conv/im2col.h"

using namespace gr::native;

TEST_CASE("conv_output_index inverts conv_input_index and conv_valid_range matches brute force") {
  for (int64_t stride = 1; stride <= 3; ++stride)
    for (int64_t pad = 0; pad <= 2; ++pad)
      for (int64_t dil = 1; dil <= 3; ++dil)
        for (int64_t k = 1; k <= 4; ++k)
          for (int64_t size = 1; size <= 9; ++size) {
            const int64_t span = dil * (k - 1) + 1;
            if (span > size + 2 * pad) continue;
            const int64_t n_out = (size + 2 * pad - span) / stride + 1;
            for (int64_t tap = 0; tap < k; ++tap) {
              CAPTURE(stride);
              CAPTURE(pad);
              CAPTURE(dil);
              CAPTURE(k);
              CAPTURE(size);
              CAPTURE(tap);
              for (int64_t i = 0; i < size; ++i) {
                int64_t want = -1;
                for (int64_t o = 0; o < n_out; ++o)
                  if (conv_input_index(o, tap, stride, pad, dil) == i) want = o;
                CHECK(conv_output_index(i, tap, stride, pad, dil, n_out) == want);
              }
              const ConvValidRange r = conv_valid_range(tap * dil - pad, stride, size, n_out);
              CHECK(r.lo <= r.hi);
              for (int64_t o = 0; o < n_out; ++o) {
                const int64_t in = conv_input_index(o, tap, stride, pad, dil);
                CHECK((in >= 0 && in < size) == (o >= r.lo && o < r.hi));
              }
            }
          }
}

namespace {
// col2im as the CUDA kernel computes it: each input element gathers its taps in (i, j) order.
std::vector<double> col2im_gather(const Conv2dArgs& a, const std::vector<double>& cols, int64_t nb) {
  const int64_t L = a.H_out * a.W_out, P = nb * L, KK = a.kH * a.kW;
  std::vector<double> gx(static_cast<size_t>(nb * a.C_in * a.H * a.W));
  for (int64_t n = 0; n < nb; ++n)
    for (int64_t c = 0; c < a.C_in; ++c)
      for (int64_t h = 0; h < a.H; ++h)
        for (int64_t w = 0; w < a.W; ++w) {
          double sum = 0;
          for (int64_t i = 0; i < a.kH; ++i) {
            const int64_t ho = conv_output_index(h, i, a.stride_h, a.pad_h, a.dil_h, a.H_out);
            if (ho < 0) continue;
            for (int64_t j = 0; j < a.kW; ++j) {
              const int64_t wo = conv_output_index(w, j, a.stride_w, a.pad_w, a.dil_w, a.W_out);
              if (wo >= 0) sum += cols[static_cast<size_t>((c * KK + i * a.kW + j) * P + n * L + ho * a.W_out + wo)];
            }
          }
          gx[static_cast<size_t>(((n * a.C_in + c) * a.H + h) * a.W + w)] = sum;
        }
  return gx;
}
}  // namespace

TEST_CASE("col2im as a gather over conv_output_index equals the CPU col2im_add bit for bit") {
  struct Case {
    int64_t C, H, W, kH, kW, sh, sw, ph, pw, dh, dw;
  };
  const Case cases[] = {{2, 7, 6, 3, 3, 1, 1, 1, 1, 1, 1},
                        {3, 9, 8, 3, 2, 2, 3, 1, 0, 1, 1},
                        {1, 10, 9, 3, 3, 1, 2, 2, 1, 2, 3},
                        {2, 5, 5, 1, 1, 2, 2, 0, 0, 1, 1},
                        {2, 6, 7, 5, 4, 3, 1, 2, 2, 1, 1}};
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  for (const Case& k : cases) {
    Conv2dArgs a;
    a.N = 2, a.C_in = k.C, a.H = k.H, a.W = k.W, a.C_out = 1, a.kH = k.kH, a.kW = k.kW;
    a.stride_h = k.sh, a.stride_w = k.sw, a.pad_h = k.ph, a.pad_w = k.pw, a.dil_h = k.dh, a.dil_w = k.dw;
    a.H_out = (a.H + 2 * a.pad_h - a.dil_h * (a.kH - 1) - 1) / a.stride_h + 1;
    a.W_out = (a.W + 2 * a.pad_w - a.dil_w * (a.kW - 1) - 1) / a.stride_w + 1;
    std::vector<double> cols(static_cast<size_t>(a.C_in * a.kH * a.kW * a.N * a.H_out * a.W_out));
    for (double& v : cols) v = u(rng);
    std::vector<double> want(static_cast<size_t>(a.N * a.C_in * a.H * a.W), 0.0);
    col2im_add<double>(a, cols.data(), 0, a.N, 0, a.C_in, want.data());
    CHECK(col2im_gather(a, cols, a.N) == want);
    // im2col reads exactly the positions conv_input_index names (0 in the padding).
    std::vector<double> x(want.size());
    for (double& v : x) v = u(rng);
    std::vector<double> got(cols.size());
    im2col<double>(a, x.data(), 0, a.N, 0, a.C_in, got.data());
    const int64_t L = a.H_out * a.W_out;
    bool same = true;
    for (int64_t c = 0; c < a.C_in; ++c)
      for (int64_t i = 0; i < a.kH; ++i)
        for (int64_t j = 0; j < a.kW; ++j)
          for (int64_t n = 0; n < a.N; ++n)
            for (int64_t l = 0; l < L; ++l) {
              const int64_t h = conv_input_index(l / a.W_out, i, a.stride_h, a.pad_h, a.dil_h);
              const int64_t w = conv_input_index(l % a.W_out, j, a.stride_w, a.pad_w, a.dil_w);
              const bool inside = h >= 0 && h < a.H && w >= 0 && w < a.W;
              const double v = inside ? x[static_cast<size_t>(((n * a.C_in + c) * a.H + h) * a.W + w)] : 0.0;
              same = same && got[static_cast<size_t>(((c * a.kH + i) * a.kW + j) * a.N * L + n * L + l)] == v;
            }
    CHECK(same);
  }
}
