// CUDA 2-D pooling (the six stubs of core/native/pooling/pooling.h): a thread per output element
// forward, a thread per input element backward. Backward gathers (each input sums the
// outputs whose windows hold it) instead of scattering with atomics, so it is deterministic
// and bit-identical to the CPU's scatter. The per-element arithmetic is pooling.h's.
#include "core/native/pooling/pooling.h"
#include "cuda_kernels/cuda_check.h"
#include "cuda_kernels/grid_stride.cuh"
#include "cuda_kernels/runtime.h"

namespace gr::cuda {
namespace {

using namespace gr::native;

constexpr int kThreads = 256;

// Shapes: in / grad_in [planes, H, W], out / grad_out / indices [planes, oH, oW], contiguous.
// Each kernel walks the elements of one side: k = (p * rows + r) * cols + c.
struct Walk {
  int64_t rows, cols;
  __device__ void split(int64_t k, int64_t& p, int64_t& r, int64_t& c) const {
    c = k % cols;
    const int64_t q = k / cols;
    r = q % rows;
    p = q / rows;
  }
};
template <class T>
__global__ void max_pool2d_kernel(const T* in, T* out, int64_t* indices, Pool2dGeometry g) {
  const Walk walk{g.oH, g.oW};
  for (int64_t k = first_index(), n = g.planes * g.oH * g.oW; k < n; k += grid_stride()) {
    int64_t p, oh, ow;
    walk.split(k, p, oh, ow);
    const MaxAt<T> m = max_pool2d_at(in + p * g.H * g.W, g, oh, ow);
    out[k] = m.value;
    indices[k] = m.index;
  }
}

template <class T>
__global__ void max_pool2d_backward_kernel(const T* grad_out, const int64_t* indices, T* grad_in, Pool2dGeometry g) {
  const Walk walk{g.H, g.W};
  const int64_t out_plane = g.oH * g.oW;
  for (int64_t k = first_index(), n = g.planes * g.H * g.W; k < n; k += grid_stride()) {
    int64_t p, h, w;
    walk.split(k, p, h, w);
    grad_in[k] = max_pool2d_backward_at(grad_out + p * out_plane, indices + p * out_plane, g, h, w);
  }
}

template <class T>
__global__ void avg_pool2d_kernel(const T* in, T* out, Pool2dGeometry g, bool count_include_pad) {
  const Walk walk{g.oH, g.oW};
  for (int64_t k = first_index(), n = g.planes * g.oH * g.oW; k < n; k += grid_stride()) {
    int64_t p, oh, ow;
    walk.split(k, p, oh, ow);
    out[k] = avg_pool2d_at(in + p * g.H * g.W, g, oh, ow, count_include_pad);
  }
}

template <class T>
__global__ void avg_pool2d_backward_kernel(const T* grad_out, T* grad_in, Pool2dGeometry g, bool count_include_pad) {
  const Walk walk{g.H, g.W};
  for (int64_t k = first_index(), n = g.planes * g.H * g.W; k < n; k += grid_stride()) {
    int64_t p, h, w;
    walk.split(k, p, h, w);
    grad_in[k] = avg_pool2d_backward_at(grad_out + p * g.oH * g.oW, g, h, w, count_include_pad);
  }
}

template <class T>
__global__ void adaptive_avg_pool2d_kernel(const T* in, T* out, Pool2dGeometry g) {
  const Walk walk{g.oH, g.oW};
  for (int64_t k = first_index(), n = g.planes * g.oH * g.oW; k < n; k += grid_stride()) {
    int64_t p, oh, ow;
    walk.split(k, p, oh, ow);
    out[k] = adaptive_avg_pool2d_at(in + p * g.H * g.W, g, oh, ow);
  }
}

template <class T>
__global__ void adaptive_avg_pool2d_backward_kernel(const T* grad_out, T* grad_in, Pool2dGeometry g) {
  const Walk walk{g.H, g.W};
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

void max_pool2d_cuda(const void* in, void* out, int64_t* indices, const Pool2dGeometry& g, ScalarType t) {
  dispatch_floating(t, "max_pool2d", [&]<class T>() {
    launch(max_pool2d_kernel<T>, outputs(g), static_cast<const T*>(in), static_cast<T*>(out), indices, g);
  });
}
void max_pool2d_backward_cuda(const void* go, const int64_t* indices, void* gi, const Pool2dGeometry& g, ScalarType t) {
  dispatch_floating(t, "max_pool2d_backward", [&]<class T>() {
    launch(max_pool2d_backward_kernel<T>, inputs(g), static_cast<const T*>(go), indices, static_cast<T*>(gi), g);
  });
}
void avg_pool2d_cuda(const void* in, void* out, const Pool2dGeometry& g, bool count_include_pad, ScalarType t) {
  dispatch_floating(t, "avg_pool2d", [&]<class T>() {
    launch(avg_pool2d_kernel<T>, outputs(g), static_cast<const T*>(in), static_cast<T*>(out), g, count_include_pad);
  });
}
void avg_pool2d_backward_cuda(const void* go, void* gi, const Pool2dGeometry& g, bool count_include_pad, ScalarType t) {
  dispatch_floating(t, "avg_pool2d_backward", [&]<class T>() {
    launch(avg_pool2d_backward_kernel<T>, inputs(g), static_cast<const T*>(go), static_cast<T*>(gi), g,
           count_include_pad);
  });
}
void adaptive_avg_pool2d_cuda(const void* in, void* out, const Pool2dGeometry& g, ScalarType t) {
  dispatch_floating(t, "adaptive_avg_pool2d", [&]<class T>() {
    launch(adaptive_avg_pool2d_kernel<T>, outputs(g), static_cast<const T*>(in), static_cast<T*>(out), g);
  });
}
void adaptive_avg_pool2d_backward_cuda(const void* go, void* gi, const Pool2dGeometry& g, ScalarType t) {
  dispatch_floating(t, "adaptive_avg_pool2d_backward", [&]<class T>() {
    launch(adaptive_avg_pool2d_backward_kernel<T>, inputs(g), static_cast<const T*>(go), static_cast<T*>(gi), g);
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
