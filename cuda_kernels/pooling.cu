// CUDA 2-D pooling (the six stubs of core/native/pooling/pooling.h): a thread per output element
// forward, a thread per input element backward. Backward gathers (each input sums the
// outputs whose windows hold it) instead of scattering with atomics, so it is deterministic
// and bit-identical to the CPU's scatter. The per-element arithmetic is pooling.h's. Where the
// geometry fits in 31 bits, flat indices split with IntDividers and max pooling's backward
// divides in 32 bits (Note [Fast index division]); 64-bit arithmetic otherwise.
#include "core/native/pooling/pooling.h"
#include "cuda_kernels/cuda_check.h"
#include "cuda_kernels/grid_stride.cuh"
#include "cuda_kernels/int_divider.h"
#include "cuda_kernels/runtime.h"

namespace gr::cuda {
namespace {

using namespace gr::native;

constexpr int kThreads = 256;

// Shapes: in / grad_in [planes, H, W], out / grad_out / indices [planes, oH, oW], contiguous.
// Each kernel walks the elements of one side: k = (p * rows + r) * cols + c.
struct Walk {
  int64_t rows, cols;
  bool narrow;  // every k < 2^31: the dividers apply
  IntDivider by_rows, by_cols;
  __device__ __forceinline__ void split(int64_t k, int64_t& p, int64_t& r, int64_t& c) const {
    if (narrow) {
      const DivMod qc = by_cols.divmod(static_cast<uint32_t>(k));
      const DivMod pr = by_rows.divmod(qc.div);
      p = pr.div, r = pr.mod, c = qc.mod;
      return;
    }
    c = k % cols;
    const int64_t q = k / cols;
    r = q % rows;
    p = q / rows;
  }
};
Walk make_walk(int64_t planes, int64_t rows, int64_t cols) {
  Walk w{rows, cols, fits_31_bits(planes * rows * cols) && rows > 0 && cols > 0, IntDivider(), IntDivider()};
  if (w.narrow) {
    w.by_rows = IntDivider(static_cast<uint32_t>(rows));
    w.by_cols = IntDivider(static_cast<uint32_t>(cols));
  }
  return w;
}

// Whether max pooling's backward may divide in 32 bits: every quantity windows_holding forms
// stays below 2^31.
bool geometry_fits_int32(const Pool2dGeometry& g) {
  const int64_t limit = int64_t(1) << 29;
  for (int64_t v : {g.H, g.W, g.oH, g.oW, g.kH * g.dH, g.kW * g.dW, g.sH, g.sW, g.pH, g.pW})
    if (v < 0 || v >= limit) return false;
  return true;
}

template <class T>
__global__ void max_pool2d_kernel(const T* in, T* out, int64_t* indices, Pool2dGeometry g, Walk walk) {
  for (int64_t k = first_index(), n = g.planes * g.oH * g.oW; k < n; k += grid_stride()) {
    int64_t p, oh, ow;
    walk.split(k, p, oh, ow);
    const MaxAt<T> m = max_pool2d_at(in + p * g.H * g.W, g, oh, ow);
    out[k] = m.value;
    indices[k] = m.index;
  }
}

template <class T, class I>
__global__ void max_pool2d_backward_kernel(const T* grad_out, const int64_t* indices, T* grad_in, Pool2dGeometry g,
                                           Walk walk) {
  const int64_t out_plane = g.oH * g.oW;
  for (int64_t k = first_index(), n = g.planes * g.H * g.W; k < n; k += grid_stride()) {
    int64_t p, h, w;
    walk.split(k, p, h, w);
    grad_in[k] = max_pool2d_backward_at<T, I>(grad_out + p * out_plane, indices + p * out_plane, g, h, w);
  }
}

template <class T>
__global__ void avg_pool2d_kernel(const T* in, T* out, Pool2dGeometry g, bool count_include_pad, Walk walk) {
  for (int64_t k = first_index(), n = g.planes * g.oH * g.oW; k < n; k += grid_stride()) {
    int64_t p, oh, ow;
    walk.split(k, p, oh, ow);
    out[k] = avg_pool2d_at(in + p * g.H * g.W, g, oh, ow, count_include_pad);
  }
}

template <class T>
__global__ void avg_pool2d_backward_kernel(const T* grad_out, T* grad_in, Pool2dGeometry g, bool count_include_pad,
                                           Walk walk) {
  for (int64_t k = first_index(), n = g.planes * g.H * g.W; k < n; k += grid_stride()) {
    int64_t p, h, w;
    walk.split(k, p, h, w);
    grad_in[k] = avg_pool2d_backward_at(grad_out + p * g.oH * g.oW, g, h, w, count_include_pad);
  }
}

template <class T>
__global__ void adaptive_avg_pool2d_kernel(const T* in, T* out, Pool2dGeometry g, Walk walk) {
  for (int64_t k = first_index(), n = g.planes * g.oH * g.oW; k < n; k += grid_stride()) {
    int64_t p, oh, ow;
    walk.split(k, p, oh, ow);
    out[k] = adaptive_avg_pool2d_at(in + p * g.H * g.W, g, oh, ow);
  }
}

template <class T>
__global__ void adaptive_avg_pool2d_backward_kernel(const T* grad_out, T* grad_in, Pool2dGeometry g, Walk walk) {
  for (int64_t k = first_index(), n = g.planes * g.H * g.W; k < n; k += grid_stride()) {
    int64_t p, h, w;
    walk.split(k, p, h, w);
    grad_in[k] = adaptive_avg_pool2d_backward_at(grad_out + p * g.oH * g.oW, g, h, w);
  }
}

// Launches `kernel` over n elements on the current stream (nothing for n == 0).
template <class... KArgs, class... Args>
void launch(void (*kernel)(KArgs...), int64_t n, Args... args) {
  if (n == 0) return;
  kernel<<<grid_size(n, kThreads), kThreads, 0, current_stream()>>>(args...);
  GR_CUDA_CHECK_LAUNCH();
}

int64_t outputs(const Pool2dGeometry& g) { return g.planes * g.oH * g.oW; }
int64_t inputs(const Pool2dGeometry& g) { return g.planes * g.H * g.W; }

Walk out_walk(const Pool2dGeometry& g) { return make_walk(g.planes, g.oH, g.oW); }
Walk in_walk(const Pool2dGeometry& g) { return make_walk(g.planes, g.H, g.W); }

void max_pool2d_cuda(const void* in, void* out, int64_t* indices, const Pool2dGeometry& g, ScalarType t) {
  dispatch_floating(t, "max_pool2d", [&]<class T>() {
    launch(max_pool2d_kernel<T>, outputs(g), static_cast<const T*>(in), static_cast<T*>(out), indices, g, out_walk(g));
  });
}
void max_pool2d_backward_cuda(const void* go, const int64_t* indices, void* gi, const Pool2dGeometry& g, ScalarType t) {
  dispatch_floating(t, "max_pool2d_backward", [&]<class T>() {
    if (geometry_fits_int32(g))
      launch(max_pool2d_backward_kernel<T, int32_t>, inputs(g), static_cast<const T*>(go), indices, static_cast<T*>(gi),
             g, in_walk(g));
    else
      launch(max_pool2d_backward_kernel<T, int64_t>, inputs(g), static_cast<const T*>(go), indices, static_cast<T*>(gi),
             g, in_walk(g));
  });
}
void avg_pool2d_cuda(const void* in, void* out, const Pool2dGeometry& g, bool count_include_pad, ScalarType t) {
  dispatch_floating(t, "avg_pool2d", [&]<class T>() {
    launch(avg_pool2d_kernel<T>, outputs(g), static_cast<const T*>(in), static_cast<T*>(out), g, count_include_pad,
           out_walk(g));
  });
}
void avg_pool2d_backward_cuda(const void* go, void* gi, const Pool2dGeometry& g, bool count_include_pad, ScalarType t) {
  dispatch_floating(t, "avg_pool2d_backward", [&]<class T>() {
    launch(avg_pool2d_backward_kernel<T>, inputs(g), static_cast<const T*>(go), static_cast<T*>(gi), g,
           count_include_pad, in_walk(g));
  });
}
void adaptive_avg_pool2d_cuda(const void* in, void* out, const Pool2dGeometry& g, ScalarType t) {
  dispatch_floating(t, "adaptive_avg_pool2d", [&]<class T>() {
    launch(adaptive_avg_pool2d_kernel<T>, outputs(g), static_cast<const T*>(in), static_cast<T*>(out), g, out_walk(g));
  });
}
void adaptive_avg_pool2d_backward_cuda(const void* go, void* gi, const Pool2dGeometry& g, ScalarType t) {
  dispatch_floating(t, "adaptive_avg_pool2d_backward", [&]<class T>() {
    launch(adaptive_avg_pool2d_backward_kernel<T>, inputs(g), static_cast<const T*>(go), static_cast<T*>(gi), g,
           in_walk(g));
  });
}

}  // namespace

GR_REGISTER_KERNEL(native::max_pool2d_stub, kCUDA, &max_pool2d_cuda);
GR_REGISTER_KERNEL(native::max_pool2d_backward_stub, kCUDA, &max_pool2d_backward_cuda);
GR_REGISTER_KERNEL(native::avg_pool2d_stub, kCUDA, &avg_pool2d_cuda);
GR_REGISTER_KERNEL(native::avg_pool2d_backward_stub, kCUDA, &avg_pool2d_backward_cuda);
GR_REGISTER_KERNEL(native::adaptive_avg_pool2d_stub, kCUDA, &adaptive_avg_pool2d_cuda);
GR_REGISTER_KERNEL(native::adaptive_avg_pool2d_backward_stub, kCUDA, &adaptive_avg_pool2d_backward_cuda);

}  // namespace gr::cuda
