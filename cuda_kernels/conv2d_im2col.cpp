// The im2col path of CUDA conv2d (cuDNN's fallback, see conv2d.h). Per chunk of nb images
// whose columns fit the workspace limit, im2col (im2col.cu), then cuBLAS strided-batched GEMMs
// (gemm_batched_stub), og = C_out / groups, CKK = C_in / groups * kH * kW, L = H_out * W_out:
//   forward      Y[n, g][og, L]    = W_g[og, CKK] x cols[n, g][CKK, L]     batched over images
//   grad weight  gW_g[og, CKK]    += gY_g[og, nb*L] x cols_g[CKK, nb*L]^T  batched over groups
//   grad input   gcols_g[CKK, nb*L] = W_g^T x gY_g[og, nb*L], col2im      batched over groups
// Forward writes Y in place (per-image column layout); the gradients use the chunk layout and
// gY transposed to [C_out, nb*L]. A 1x1 stride-1 unpadded kernel reads x (and writes gx)
// directly where the layouts agree. The bias gradient is two sum_stub reductions.
#include "cuda_kernels/conv2d_im2col.h"

#include <algorithm>
#include <cstdint>

#include "core/factory.h"
#include "core/native/gemm/gemm.h"
#include "core/native/reduce/reduce.h"
#include "cuda_kernels/conv2d.h"
#include "cuda_kernels/runtime.h"

namespace gr::cuda {
namespace {

using native::Conv2dArgs;
using native::gemm_batched_stub;

// Scratch memory from the device allocator, freed when the tensor goes (after the work that
// uses it is queued: the stream orders the reuse).
Tensor workspace(int64_t elements, ScalarType t) {
  return empty({elements}, TensorOptions(t).device(Device(kCUDA, current_device())));
}

bool is_pointwise(const Conv2dArgs& a) {
  return a.kH == 1 && a.kW == 1 && a.stride_h == 1 && a.stride_w == 1 && a.pad_h == 0 && a.pad_w == 0;
}

// Images per chunk: as many as the workspace limit allows, at least one.
int64_t images_per_chunk(const Conv2dArgs& a, int64_t bytes_per_image) {
  const size_t limit = std::min<size_t>(conv2d_workspace_limit(), size_t(INT64_MAX));
  return std::clamp<int64_t>(static_cast<int64_t>(limit) / std::max<int64_t>(bytes_per_image, 1), 1, a.N);
}

template <class T>
void forward(const Conv2dArgs& a, ScalarType t, const T* x, const T* w, const T* b, T* y) {
  const int64_t G = a.groups, og = a.C_out / G, rows = a.C_in * a.kH * a.kW, CKK = rows / G, L = a.H_out * a.W_out;
  const cudaStream_t stream = current_stream();
  const bool pointwise = is_pointwise(a);
  const int64_t nb_max = pointwise ? a.N : images_per_chunk(a, rows * L * static_cast<int64_t>(sizeof(T)));
  Tensor ws = workspace(pointwise ? 0 : rows * nb_max * L, t);
  const ColsLayout per_image{rows * L, L};
  for (int64_t n0 = 0; n0 < a.N; n0 += nb_max) {
    const int64_t nb = std::min(nb_max, a.N - n0);
    T* buf = static_cast<T*>(ws.data_ptr());
    const T* cols = pointwise ? x + n0 * a.C_in * L : buf;
    if (!pointwise) im2col_cuda<T>(a, x, n0, nb, per_image, buf, stream);
    for (int64_t g = 0; g < G; ++g)
      gemm_batched_stub(kCUDA, t, false, false, og, L, CKK, 1.0, w + g * og * CKK, CKK, 0, cols + g * CKK * L, L,
                        per_image.image_stride, 0.0, y + (n0 * a.C_out + g * og) * L, L, a.C_out * L, nb);
  }
  if (b != nullptr) add_channel_bias<T>(y, b, a.N, a.C_out, L, stream);
}

// gb[c] = sum over n, l of gy[n, c, l]: over l, then over n.
void bias_grad(const Conv2dArgs& a, ScalarType t, const void* gy, void* gb) {
  const int64_t L = a.H_out * a.W_out;
  if (a.N == 1) return native::sum_stub(kCUDA, gy, gb, a.C_out, L, 1, t, t);
  Tensor per_image = workspace(a.N * a.C_out, t);
  native::sum_stub(kCUDA, gy, per_image.data_ptr(), a.N * a.C_out, L, 1, t, t);
  native::sum_stub(kCUDA, per_image.data_ptr(), gb, 1, a.N, a.C_out, t, t);
}

template <class T>
void backward(const Conv2dArgs& a, ScalarType t, const T* gy, const T* x, const T* w, T* gx, T* gw) {
  const int64_t G = a.groups, og = a.C_out / G, rows = a.C_in * a.kH * a.kW, CKK = rows / G, L = a.H_out * a.W_out;
  const cudaStream_t stream = current_stream();
  const bool pointwise = is_pointwise(a);
  const int64_t nb_max = images_per_chunk(a, (rows + a.C_out) * L * static_cast<int64_t>(sizeof(T)));
  const bool direct = pointwise && nb_max == 1;  // every chunk is one image: x and gx are the columns
  Tensor cols_ws = workspace(direct ? 0 : rows * nb_max * L, t);
  Tensor gy_ws = workspace(nb_max > 1 ? a.C_out * nb_max * L : 0, t);
  T* cols = static_cast<T*>(cols_ws.data_ptr());
  T* gy_buf = static_cast<T*>(gy_ws.data_ptr());
  for (int64_t n0 = 0; n0 < a.N; n0 += nb_max) {
    const int64_t nb = std::min(nb_max, a.N - n0), P = nb * L;
    const ColsLayout chunk{L, P};
    const T* gyc = gy + n0 * a.C_out * L;  // one image: [C_out, L] already
    if (nb > 1) {
      images_to_channel_major<T>(gy, n0, nb, a.C_out, L, gy_buf, stream);
      gyc = gy_buf;
    }
    const bool in_place = pointwise && nb == 1;
    if (gw != nullptr) {
      const T* xc = in_place ? x + n0 * a.C_in * L : cols;
      if (!in_place) im2col_cuda<T>(a, x, n0, nb, chunk, cols, stream);
      gemm_batched_stub(kCUDA, t, false, true, og, CKK, P, 1.0, gyc, P, og * P, xc, P, CKK * P, n0 == 0 ? 0.0 : 1.0, gw,
                        CKK, og * CKK, G);
    }
    if (gx != nullptr) {  // after the weight gradient, which reads the same column buffer
      T* gcols = in_place ? gx + n0 * a.C_in * L : cols;
      gemm_batched_stub(kCUDA, t, true, false, CKK, P, og, 1.0, w, CKK, og * CKK, gyc, P, og * P, 0.0, gcols, P,
                        CKK * P, G);
      if (!in_place) col2im_cuda<T>(a, cols, n0, nb, chunk, gx, stream);
    }
  }
}

}  // namespace

void conv2d_forward_im2col(const Conv2dArgs& a, ScalarType t, const void* x, const void* w, const void* b, void* y) {
  dispatch_floating(t, "conv2d", [&]<class T>() {
    forward<T>(a, t, static_cast<const T*>(x), static_cast<const T*>(w), static_cast<const T*>(b), static_cast<T*>(y));
  });
}

void conv2d_backward_im2col(const Conv2dArgs& a, ScalarType t, const void* gy, const void* x, const void* w, void* gx,
                            void* gw, void* gb) {
  if (gb != nullptr) bias_grad(a, t, gy, gb);
  if (gx == nullptr && gw == nullptr) return;
  dispatch_floating(t, "conv2d_backward", [&]<class T>() {
    backward<T>(a, t, static_cast<const T*>(gy), static_cast<const T*>(x), static_cast<const T*>(w),
                static_cast<T*>(gx), static_cast<T*>(gw));
  });
}

}  // namespace gr::cuda
