// conv2d's tensor-level entry points and CPU kernels (argument checks: conv_args.cpp): im2col
// over a chunk of the minibatch, then one GEMM per group, so the products are large:
//   forward      Y[og, nb*L]      = W_g[og, CKK] x cols[CKK, nb*L]
//   grad weight  gW_g[og, CKK]   += gY[og, nb*L] x cols^T
//   grad input   gcols[CKK, nb*L] = W_g^T x gY[og, nb*L], then col2im
// with og = C_out / groups, CKK = C_in / groups * kH * kW, L = H_out * W_out. A 1x1 kernel
// with stride 1 and no padding reads the input planes directly (no im2col). 3x3 stride-1
// kernels with enough channels go to Winograd instead (see use_winograd), convolutions with
// few taps per output to the direct kernels (see use_direct), tiny maps to one dense product
// (see use_dense).
#include "core/native/conv/conv2d.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>

#include "core/factory.h"
#include "core/native/conv/conv2d_dense.h"
#include "core/native/conv/conv2d_direct.h"
#include "core/native/conv/conv2d_winograd.h"
#include "core/native/copy/copy.h"
#include "core/native/gemm/gemm.h"
#include "core/native/gemm/gemm_packed.h"
#include "core/native/conv/im2col.h"
#include "core/parallel.h"

namespace gr::native {

GR_DEFINE_DISPATCH(Conv2dForwardFn, conv2d_forward_stub);
GR_DEFINE_DISPATCH(Conv2dBackwardFn, conv2d_backward_stub);

namespace {

// ---- CPU kernels ----

bool is_pointwise(const Conv2dArgs& a) {
  return a.kH == 1 && a.kW == 1 && a.stride_h == 1 && a.stride_w == 1 && a.pad_h == 0 && a.pad_w == 0;
}

std::atomic<int64_t> g_workspace_limit{int64_t(64) << 20};
std::atomic<Conv2dCpuAlgorithm> g_algorithm{Conv2dCpuAlgorithm::kAuto};

// kAuto takes Winograd only where the packed GEMM kernels exist (its GEMMs have no Eigen
// fallback) and there are enough channels for its GEMMs to be worth it.
template <class T>
bool use_winograd(const Conv2dArgs& a) {
  if (!winograd_applicable(a)) return false;
  switch (g_algorithm.load()) {
    case Conv2dCpuAlgorithm::kIm2col: return false;
    case Conv2dCpuAlgorithm::kWinograd: return true;
    case Conv2dCpuAlgorithm::kDirect:
    case Conv2dCpuAlgorithm::kDense: return false;
    // Output maps under 4x4 are one or two tiles mostly made of padding: im2col wins there
    // (ResNet-18's last stages at 32x32 input: 2x2 and 1x1 maps, 1.5x and 4x faster).
    default:
      return packed_gemm_available<T>() && a.C_in / a.groups >= 8 && a.C_out / a.groups >= 8 && a.H_out >= 4 &&
             a.W_out >= 4;
  }
}

// kAuto takes the direct kernels where they have vector code and few taps per output, where
// im2col's GEMM has a tiny K and its column buffer costs more than the products.
template <class T>
bool use_direct(const Conv2dArgs& a) {
  if (!direct_applicable(a)) return false;
  switch (g_algorithm.load()) {
    case Conv2dCpuAlgorithm::kDirect: return true;
    case Conv2dCpuAlgorithm::kAuto: return direct_vectorized<T>() && a.C_in / a.groups * a.kH * a.kW <= 32;
    default: return false;
  }
}

// kAuto takes the dense product where it needs at most half of im2col's multiply-adds (the
// input map has at most half as many positions as the kernel has taps; see Note [Convolution
// as one dense product]) and its matrix fits the workspace limit.
template <class T>
bool use_dense(const Conv2dArgs& a) {
  switch (g_algorithm.load()) {
    case Conv2dCpuAlgorithm::kDense: return true;
    case Conv2dCpuAlgorithm::kAuto:
      return 2 * a.H * a.W <= a.kH * a.kW &&
             dense_matrix_elements(a) * static_cast<int64_t>(sizeof(T)) <= g_workspace_limit.load();
    default: return false;
  }
}

constexpr int64_t kCacheBytes = int64_t(1) << 20;

// Images per im2col chunk: enough for the chunk's columns to fill about 1 MiB, so im2col,
// the GEMM's packing and col2im work in L2; at least one image, and never more than the
// workspace limit allows. A pointwise convolution reads the input in place, one image at a time.
int64_t images_per_chunk(const Conv2dArgs& a, int64_t col_bytes_per_image) {
  if (is_pointwise(a)) return 1;
  const int64_t budget = std::min<int64_t>(kCacheBytes, g_workspace_limit.load());
  return std::clamp<int64_t>(budget / std::max<int64_t>(col_bytes_per_image, 1), 1, std::max<int64_t>(a.N, 1));
}

template <class T>
std::unique_ptr<T[]> scratch(int64_t n) {
  return std::make_unique_for_overwrite<T[]>(static_cast<size_t>(std::max<int64_t>(n, 1)));
}

// Calls fn(matrix row pointer, tensor plane pointer, r) for each of `rows` channels
// [c0, c0 + rows) of images [n0, n0 + nb) in an [N, C, L] tensor, where the matrix is
// [rows, nb * L]; in parallel.
template <class T, class U, class Fn>
void for_planes(T* matrix, U* tensor, int64_t C, int64_t L, int64_t n0, int64_t nb, int64_t c0, int64_t rows, Fn fn) {
  parallel_for(0, rows * nb, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(L, 1)), [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      const int64_t r = p / nb, n = p % nb;
      fn(matrix + r * nb * L + n * L, tensor + ((n0 + n) * C + c0 + r) * L, r);
    }
  });
}

template <class T>
void forward_cpu(const Conv2dArgs& a, const T* x, const T* w, const T* bias, T* y) {
  const int64_t G = a.groups, cg = a.C_in / G, og = a.C_out / G, CKK = cg * a.kH * a.kW, L = a.H_out * a.W_out;
  if (a.N == 0 || a.C_out == 0 || L == 0) return;
  if (use_direct<T>(a)) return direct_forward<T>(a, x, w, bias, y);
  if (use_dense<T>(a)) return dense_forward<T>(a, x, w, bias, y);
  if (use_winograd<T>(a)) return winograd_forward<T>(a, x, w, bias, y);
  const bool pointwise = is_pointwise(a);
  const int64_t nb_max = images_per_chunk(a, CKK * L * static_cast<int64_t>(sizeof(T)));
  auto cols = scratch<T>(pointwise ? 0 : CKK * nb_max * L);
  auto ybuf = scratch<T>(nb_max > 1 ? og * nb_max * L : 0);
  for (int64_t n0 = 0; n0 < a.N; n0 += nb_max) {
    const int64_t nb = std::min(nb_max, a.N - n0), P = nb * L;
    for (int64_t g = 0; g < G; ++g) {
      const T* b = pointwise ? x + (n0 * a.C_in + g * cg) * L : cols.get();
      if (!pointwise) im2col<T>(a, x, n0, nb, g * cg, cg, cols.get());
      const T* wg = w + g * og * CKK;
      const T* bg = bias ? bias + g * og : nullptr;
      if (nb == 1) {  // the output block [og, L] of this image is contiguous: write it in place
        T* yg = y + (n0 * a.C_out + g * og) * L;
        gemm_cpu(false, false, og, L, CKK, T(1), wg, CKK, b, L, T(0), yg, L);
        if (bg)
          for (int64_t o = 0; o < og; ++o)
            for (int64_t l = 0; l < L; ++l) yg[o * L + l] += bg[o];
      } else {
        gemm_cpu(false, false, og, P, CKK, T(1), wg, CKK, b, P, T(0), ybuf.get(), P);
        for_planes(ybuf.get(), y, a.C_out, L, n0, nb, g * og, og, [&](const T* m, T* t, int64_t o) {
          const T add = bg ? bg[o] : T(0);
          for (int64_t l = 0; l < L; ++l) t[l] = m[l] + add;
        });
      }
    }
  }
}

template <class T>
void backward_cpu(const Conv2dArgs& a, const T* gy, const T* x, const T* w, T* gx, T* gw, T* gb) {
  const int64_t G = a.groups, cg = a.C_in / G, og = a.C_out / G, CKK = cg * a.kH * a.kW, L = a.H_out * a.W_out;
  const bool direct = a.N > 0 && L > 0 && use_direct<T>(a);
  if (gb && !(direct && gw)) {  // (the direct kernels sum it in their weight-gradient pass)
    parallel_for(0, a.C_out, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(a.N * L, 1)), [&](int64_t o0, int64_t o1) {
      for (int64_t o = o0; o < o1; ++o) {
        // 16 independent partial sums: a vector add per step instead of one long scalar chain.
        T part[16] = {};
        for (int64_t n = 0; n < a.N; ++n) {
          const T* row = gy + (n * a.C_out + o) * L;
          int64_t l = 0;
          for (; l + 16 <= L; l += 16)
            for (int j = 0; j < 16; ++j) part[j] += row[l + j];
          for (; l < L; ++l) part[l % 16] += row[l];
        }
        T total = 0;
        for (T p : part) total += p;
        gb[o] = total;
      }
    });
  }
  if (gw && (a.N == 0 || L == 0)) std::fill(gw, gw + a.C_out * CKK, T(0));
  if (!gx && !gw) return;
  if (direct) return direct_backward<T>(a, gy, x, w, gx, gw, gw ? gb : nullptr);
  if (a.N > 0 && L > 0 && use_dense<T>(a)) return dense_backward<T>(a, gy, x, w, gx, gw);
  if (a.N > 0 && use_winograd<T>(a)) return winograd_backward<T>(a, gy, x, w, gx, gw);
  const bool pointwise = is_pointwise(a);
  if (gx && !pointwise) std::fill(gx, gx + a.N * a.C_in * a.H * a.W, T(0));
  if (a.N == 0 || L == 0) return;
  const int64_t nb_max = images_per_chunk(a, CKK * L * static_cast<int64_t>(sizeof(T)));
  auto cols = scratch<T>(pointwise ? 0 : CKK * nb_max * L);
  auto gybuf = scratch<T>(nb_max > 1 ? og * nb_max * L : 0);
  for (int64_t n0 = 0; n0 < a.N; n0 += nb_max) {
    const int64_t nb = std::min(nb_max, a.N - n0), P = nb * L;
    for (int64_t g = 0; g < G; ++g) {
      // This chunk's output gradient as a [og, P] matrix (in place when it is one image).
      const T* gyg = gy + (n0 * a.C_out + g * og) * L;
      if (nb > 1) {
        for_planes(gybuf.get(), gy, a.C_out, L, n0, nb, g * og, og,
                   [&](T* m, const T* t, int64_t) { std::memcpy(m, t, static_cast<size_t>(L) * sizeof(T)); });
        gyg = gybuf.get();
      }
      if (gw) {
        const T* b = pointwise ? x + (n0 * a.C_in + g * cg) * L : cols.get();
        if (!pointwise) im2col<T>(a, x, n0, nb, g * cg, cg, cols.get());
        // Both operands run along P: gemm_nt reads them in place (dot products for few columns).
        if (packed_gemm_available<T>())
          gemm_nt(og, CKK, P, gyg, P, b, P, gw + g * og * CKK, CKK, n0 > 0, in_parallel_region() ? 1 : get_num_threads());
        else
          gemm_cpu(false, true, og, CKK, P, T(1), gyg, P, b, P, n0 == 0 ? T(0) : T(1), gw + g * og * CKK, CKK);
      }
      if (gx) {
        const T* wg = w + g * og * CKK;
        if (pointwise) {
          gemm_cpu(true, false, CKK, P, og, T(1), wg, CKK, gyg, P, T(0), gx + (n0 * a.C_in + g * cg) * L, L);
        } else {
          gemm_cpu(true, false, CKK, P, og, T(1), wg, CKK, gyg, P, T(0), cols.get(), P);
          col2im_add<T>(a, cols.get(), n0, nb, g * cg, cg, gx);
        }
      }
    }
  }
}

void conv2d_forward_cpu(const Conv2dArgs& a, ScalarType t, const void* x, const void* w, const void* b, void* y) {
  dispatch_floating(t, "conv2d", [&]<class T>() {
    forward_cpu<T>(a, static_cast<const T*>(x), static_cast<const T*>(w), static_cast<const T*>(b), static_cast<T*>(y));
  });
}

void conv2d_backward_cpu(const Conv2dArgs& a, ScalarType t, const void* gy, const void* x, const void* w, void* gx,
                         void* gw, void* gb) {
  dispatch_floating(t, "conv2d_backward", [&]<class T>() {
    backward_cpu<T>(a, static_cast<const T*>(gy), static_cast<const T*>(x), static_cast<const T*>(w),
                    static_cast<T*>(gx), static_cast<T*>(gw), static_cast<T*>(gb));
  });
}

Tensor as_float32(const Tensor& t) { return t.defined() ? to_dtype(t, kFloat32) : t; }

}  // namespace

GR_REGISTER_KERNEL(conv2d_forward_stub, kCPU, &conv2d_forward_cpu);
GR_REGISTER_KERNEL(conv2d_backward_stub, kCPU, &conv2d_backward_cpu);

}  // namespace gr::native

namespace gr::backends::cpu {
void set_conv2d_workspace_limit(int64_t bytes) {
  GR_CHECK(bytes >= 0, "set_conv2d_workspace_limit: expected a non-negative byte count, got ", bytes);
  native::g_workspace_limit.store(bytes);
}
int64_t conv2d_workspace_limit() { return native::g_workspace_limit.load(); }

void set_conv2d_algorithm(Conv2dAlgorithm algorithm) { native::g_algorithm.store(algorithm); }
Conv2dAlgorithm conv2d_algorithm() { return native::g_algorithm.load(); }
}  // namespace gr::backends::cpu

namespace gr::native {

Tensor conv2d(const Conv2dArgs& a, const Tensor& input, const Tensor& weight, const Tensor& bias) {
  if (is_reduced_float(input.scalar_type()))  // Note [Reduced float math]
    return to_dtype(conv2d(a, as_float32(input), as_float32(weight), as_float32(bias)), input.scalar_type());
  Tensor out = empty({a.N, a.C_out, a.H_out, a.W_out}, input.options());
  Tensor x = contiguous(input), w = contiguous(weight), b = bias.defined() ? contiguous(bias) : Tensor();
  conv2d_forward_stub(input.device(), a, input.scalar_type(), x.data_ptr(), w.data_ptr(),
                      b.defined() ? b.data_ptr() : nullptr, out.data_ptr());
  return out;
}

Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride, IntArrayRef padding,
              IntArrayRef dilation, int64_t groups) {
  return conv2d(conv2d_args(input, weight, bias, stride, padding, dilation, groups), input, weight, bias);
}

std::tuple<Tensor, Tensor, Tensor> conv2d_backward(const Conv2dArgs& a, const Tensor& grad_output,
                                                   const Tensor& input, const Tensor& weight,
                                                   std::array<bool, 3> need) {
  GR_CHECK(grad_output.defined() && grad_output.dim() == 4 && grad_output.size(0) == a.N &&
               grad_output.size(1) == a.C_out && grad_output.size(2) == a.H_out && grad_output.size(3) == a.W_out,
           "conv2d_backward: grad_output must be [", a.N, ", ", a.C_out, ", ", a.H_out, ", ", a.W_out, "], got ",
           grad_output.defined() ? grad_output.sizes() : IntArrayRef());
  GR_CHECK(!need[0] || weight.defined(), "conv2d_backward: the input gradient needs the weight");
  GR_CHECK(!need[1] || input.defined(), "conv2d_backward: the weight gradient needs the input");
  const Tensor& like = need[1] ? input : need[0] ? weight : grad_output;
  GR_CHECK(grad_output.scalar_type() == like.scalar_type() && grad_output.device() == like.device(),
           "conv2d_backward: grad_output is ", grad_output.scalar_type(), " on ", grad_output.device(),
           " but the convolution ran in ", like.scalar_type(), " on ", like.device());
  if (is_reduced_float(grad_output.scalar_type())) {  // Note [Reduced float math]
    const ScalarType t = grad_output.scalar_type();
    auto [gi, gw, gb] = conv2d_backward(a, as_float32(grad_output), as_float32(input), as_float32(weight), need);
    auto back = [t](const Tensor& g) { return g.defined() ? to_dtype(g, t) : g; };
    return {back(gi), back(gw), back(gb)};
  }
  const TensorOptions opts = grad_output.options();
  Tensor gi = need[0] ? empty({a.N, a.C_in, a.H, a.W}, opts) : Tensor();
  Tensor gw = need[1] ? empty({a.C_out, a.C_in / a.groups, a.kH, a.kW}, opts) : Tensor();
  Tensor gb = need[2] ? empty({a.C_out}, opts) : Tensor();
  if (!need[0] && !need[1] && !need[2]) return {gi, gw, gb};
  Tensor gy = contiguous(grad_output);
  Tensor x = need[1] ? contiguous(input) : Tensor(), w = need[0] ? contiguous(weight) : Tensor();
  auto ptr = [](const Tensor& t) { return t.defined() ? t.data_ptr() : nullptr; };
  conv2d_backward_stub(grad_output.device(), a, grad_output.scalar_type(), gy.data_ptr(), ptr(x), ptr(w), ptr(gi),
                       ptr(gw), ptr(gb));
  return {gi, gw, gb};
}

}  // namespace gr::native
