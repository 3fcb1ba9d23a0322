// Convolution as one dense matrix product over whole images (see conv2d_dense.h).
//
// Note [Convolution as one dense product]
// Per group g, image n's input planes [cg, H, W] are one contiguous run of cg * Lin values in
// the NCHW buffer (Lin = H * W), and its output planes one run of og * Lout values (Lout =
// H_out * W_out). The convolution is a linear map between them, y_n = D x_n, with
//   D[(o, p), (c, q)] = w[o, c, i, j]  where input position q is where tap (i, j) of output
//                                       position p lands (q = (ho*sh - ph + i*dh, wo*sw - pw + j*dw)),
//                       0              where no tap of p lands on q.
// Over the minibatch, with the tensors read in place as matrices (rows n, leading dimension
// C * L):
//   forward      Y [N, og*Lout] = X [N, cg*Lin] x D^T
//   grad input   gX [N, cg*Lin] = gY [N, og*Lout] x D
//   grad weight  gD = gY^T x X,  gw[o, c, i, j] = sum of gD[(o, p), (c, q)] over the (p, q) of tap (i, j)
// The product costs N og Lout cg Lin multiply-adds against im2col's N og Lout cg kH kW, and
// needs no im2col or col2im pass: on maps with fewer positions than taps it is much cheaper.
// ResNet-18 at 3x32x32 ends on 2x2 and 1x1 maps, where 3x3 kernels with padding 1 mostly read
// padding: 2.25x and 9x fewer products (a 1x1 map leaves only the centre tap).
#include "core/native/conv/conv2d_dense.h"

#include <algorithm>
#include <vector>

#include "core/native/conv/conv2d_workspace.h"
#include "core/native/gemm/gemm.h"
#include "core/parallel.h"

namespace gr::native {

namespace {

// Where D has weights: for each output position p, the input positions q that its taps land
// on and which tap (i * kW + j) that is (distinct taps of one output read distinct inputs).
struct Taps {
  std::vector<int64_t> begin;        // pairs of p: [begin[p], begin[p + 1])
  std::vector<int64_t> q, tap;
  bool full = false;                 // every (p, q) has a tap: D has no zeros
};

Taps tap_table(const Conv2dArgs& a) {
  Taps t;
  for (int64_t ho = 0; ho < a.H_out; ++ho)
    for (int64_t wo = 0; wo < a.W_out; ++wo) {
      t.begin.push_back(static_cast<int64_t>(t.q.size()));
      for (int64_t i = 0; i < a.kH; ++i) {
        const int64_t h = ho * a.stride_h - a.pad_h + i * a.dil_h;
        if (h < 0 || h >= a.H) continue;
        for (int64_t j = 0; j < a.kW; ++j) {
          const int64_t v = wo * a.stride_w - a.pad_w + j * a.dil_w;
          if (v >= 0 && v < a.W) t.q.push_back(h * a.W + v), t.tap.push_back(i * a.kW + j);
        }
      }
    }
  t.begin.push_back(static_cast<int64_t>(t.q.size()));
  t.full = static_cast<int64_t>(t.q.size()) == a.H_out * a.W_out * a.H * a.W;
  return t;
}

// Output channels per parallel chunk when each costs `work` element moves.
int64_t channel_grain(int64_t work) { return std::max<int64_t>(1, kGrainSize / std::max<int64_t>(work, 1)); }

// Fills d [og*Lout, cg*Lin] from group g's weights wg [og, cg, kH, kW], row by row; each
// (q, tap) pair of a row is one strided copy over the channels (no per-element branches:
// the copies ran at ~3 cycles an element with them).
template <class T>
void build_matrix(const Conv2dArgs& a, const Taps& taps, const T* wg, T* d) {
  const int64_t cg = a.C_in / a.groups, og = a.C_out / a.groups, KK = a.kH * a.kW;
  const int64_t Lin = a.H * a.W, Lout = a.H_out * a.W_out, row = cg * Lin;
  parallel_for(0, og, channel_grain(Lout * row), [&](int64_t o0, int64_t o1) {
    for (int64_t o = o0; o < o1; ++o)
      for (int64_t p = 0; p < Lout; ++p) {
        T* __restrict dr = d + (o * Lout + p) * row;
        if (!taps.full) std::fill(dr, dr + row, T(0));
        for (int64_t e = taps.begin[p]; e < taps.begin[p + 1]; ++e) {
          const T* __restrict k = wg + o * cg * KK + taps.tap[e];
          T* __restrict dq = dr + taps.q[e];
          for (int64_t c = 0; c < cg; ++c) dq[c * Lin] = k[c * KK];
        }
      }
  });
}

// The adjoint of build_matrix: gw [og, cg, kH, kW] from gd [og*Lout, cg*Lin].
template <class T>
void fold_matrix(const Conv2dArgs& a, const Taps& taps, const T* gd, T* gwg) {
  const int64_t cg = a.C_in / a.groups, og = a.C_out / a.groups, KK = a.kH * a.kW;
  const int64_t Lin = a.H * a.W, Lout = a.H_out * a.W_out, row = cg * Lin;
  parallel_for(0, og, channel_grain(Lout * row), [&](int64_t o0, int64_t o1) {
    for (int64_t o = o0; o < o1; ++o) {
      std::fill(gwg + o * cg * KK, gwg + (o + 1) * cg * KK, T(0));
      for (int64_t p = 0; p < Lout; ++p)
        for (int64_t e = taps.begin[p]; e < taps.begin[p + 1]; ++e) {
          const T* __restrict gq = gd + (o * Lout + p) * row + taps.q[e];
          T* __restrict k = gwg + o * cg * KK + taps.tap[e];
          for (int64_t c = 0; c < cg; ++c) k[c * KK] += gq[c * Lin];
        }
    }
  });
}

}  // namespace

int64_t dense_matrix_elements(const Conv2dArgs& a) {
  return (a.C_out / a.groups) * a.H_out * a.W_out * (a.C_in / a.groups) * a.H * a.W;
}

template <class T>
void dense_forward(const Conv2dArgs& a, const T* x, const T* w, const T* bias, T* y) {
  const int64_t G = a.groups, cg = a.C_in / G, og = a.C_out / G, KK = a.kH * a.kW;
  const int64_t Lin = a.H * a.W, Lout = a.H_out * a.W_out;
  const Taps tap = tap_table(a);
  Workspace<T> d_ws(5, og * Lout * cg * Lin);
  T* d = d_ws.get();
  for (int64_t g = 0; g < G; ++g) {
    build_matrix(a, tap, w + g * og * cg * KK, d);
    gemm_cpu(false, true, a.N, og * Lout, cg * Lin, T(1), x + g * cg * Lin, a.C_in * Lin, d, cg * Lin, T(0),
             y + g * og * Lout, a.C_out * Lout);
  }
  if (bias)
    parallel_for(0, a.N * a.C_out, channel_grain(Lout), [&](int64_t b, int64_t e) {
      for (int64_t p = b; p < e; ++p) {
        const T add = bias[p % a.C_out];
        for (int64_t l = 0; l < Lout; ++l) y[p * Lout + l] += add;
      }
    });
}

template <class T>
void dense_backward(const Conv2dArgs& a, const T* gy, const T* x, const T* w, T* gx, T* gw) {
  const int64_t G = a.groups, cg = a.C_in / G, og = a.C_out / G, KK = a.kH * a.kW;
  const int64_t Lin = a.H * a.W, Lout = a.H_out * a.W_out, row = cg * Lin;
  const Taps tap = tap_table(a);
  Workspace<T> d_ws(5, og * Lout * row);
  T* d = d_ws.get();
  for (int64_t g = 0; g < G; ++g) {
    const T* gyg = gy + g * og * Lout;
    if (gx) {
      build_matrix(a, tap, w + g * og * cg * KK, d);
      gemm_cpu(false, false, a.N, row, og * Lout, T(1), gyg, a.C_out * Lout, d, row, T(0), gx + g * row,
               a.C_in * Lin);
    }
    if (gw) {  // gD = gY^T X into the same buffer, then folded onto the taps
      gemm_cpu(true, false, og * Lout, row, a.N, T(1), gyg, a.C_out * Lout, x + g * row, a.C_in * Lin, T(0), d, row);
      fold_matrix(a, tap, d, gw + g * og * cg * KK);
    }
  }
}

template void dense_forward<float>(const Conv2dArgs&, const float*, const float*, const float*, float*);
template void dense_forward<double>(const Conv2dArgs&, const double*, const double*, const double*, double*);
template void dense_backward<float>(const Conv2dArgs&, const float*, const float*, const float*, float*, float*);
template void dense_backward<double>(const Conv2dArgs&, const double*, const double*, const double*, double*, double*);

}  // namespace gr::native
