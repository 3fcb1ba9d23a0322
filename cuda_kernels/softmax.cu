// CUDA softmax / log_softmax forward and backward over R of a contiguous [outer, R, inner]
// (the softmax_stub contracts of core/native/activation/softmax.h). A row is the R elements of one
// (o, j): short rows, or many strided rows, get a thread each (softmax_row, the CPU's loop);
// long rows get a block each, with block reductions for the max and the double sums. The
// per-element arithmetic is softmax.h's, shared with the CPU. logsumexp's kernel is the
// softmax's row statistics.
#include <algorithm>

#include "core/native/activation/softmax.h"
#include "cuda_kernels/block_reduce.cuh"
#include "cuda_kernels/cuda_check.h"
#include "cuda_kernels/grid_stride.cuh"
#include "cuda_kernels/runtime.h"

namespace gr::cuda {
namespace {

using namespace gr::native;

constexpr int kThreads = 256;  // a multiple of 32 (block_all_reduce)

// Shapes: in/out [outer, R, inner] contiguous; row k = o * inner + j starts at row_base(k)
// and has stride inner. Every kernel takes (rows, R, inner, log, pointers...).
__device__ __forceinline__ int64_t row_base(int64_t k, int64_t R, int64_t inner) { return (k / inner) * R * inner + k % inner; }

template <class T>
__global__ void softmax_thread_per_row(int64_t rows, int64_t R, int64_t inner, bool log, const T* in, T* out) {
  for (int64_t k = first_index(); k < rows; k += grid_stride()) {
    const int64_t base = row_base(k, R, inner);
    softmax_row(in + base, out + base, R, inner, log);
  }
}

template <class T>
__global__ void softmax_block_per_row(int64_t rows, int64_t R, int64_t inner, bool log, const T* in, T* out) {
  for (int64_t k = blockIdx.x; k < rows; k += gridDim.x) {  // uniform per block: no divergent barrier
    const int64_t base = row_base(k, R, inner);
    const T* x = in + base;
    T* y = out + base;
    T m = x[0];
    for (int64_t r = threadIdx.x; r < R; r += blockDim.x) m = Max{}(m, x[r * inner]);
    m = block_all_reduce(m, Max{});  // NaN propagates here; the CPU's output is all NaN then too
    double s = 0;
    for (int64_t r = threadIdx.x; r < R; r += blockDim.x) s += softmax_term(x[r * inner], m);
    s = block_all_reduce(s, Sum{});
    if (log) {
      const T lse = log_softmax_lse(s, m);
      for (int64_t r = threadIdx.x; r < R; r += blockDim.x) y[r * inner] = x[r * inner] - lse;
    } else {
      const double inv = 1.0 / s;
      for (int64_t r = threadIdx.x; r < R; r += blockDim.x) y[r * inner] = softmax_value(x[r * inner], m, inv);
    }
  }
}

template <class T>
__global__ void softmax_backward_thread_per_row(int64_t rows, int64_t R, int64_t inner, bool log, const T* grad,
                                                const T* out, T* grad_in) {
  for (int64_t k = first_index(); k < rows; k += grid_stride()) {
    const int64_t base = row_base(k, R, inner);
    softmax_backward_row(grad + base, out + base, grad_in + base, R, inner, log);
  }
}

template <class T>
__global__ void softmax_backward_block_per_row(int64_t rows, int64_t R, int64_t inner, bool log, const T* grad,
                                               const T* out, T* grad_in) {
  for (int64_t k = blockIdx.x; k < rows; k += gridDim.x) {
    const int64_t base = row_base(k, R, inner);
    const T *g = grad + base, *y = out + base;
    T* gi = grad_in + base;
    double s = 0;
    for (int64_t r = threadIdx.x; r < R; r += blockDim.x) s += softmax_grad_term(g[r * inner], y[r * inner], log);
    s = block_all_reduce(s, Sum{});
    for (int64_t r = threadIdx.x; r < R; r += blockDim.x)
      gi[r * inner] = softmax_grad_value(g[r * inner], y[r * inner], s, log);
  }
}

// logsumexp (logsumexp_stub): softmax's row statistics, one output per row.
template <class T>
__global__ void logsumexp_thread_per_row(int64_t rows, int64_t R, int64_t inner, bool, const T* in, T* out) {
  for (int64_t k = first_index(); k < rows; k += grid_stride()) {
    const T* x = in + row_base(k, R, inner);
    T m = x[0];
    for (int64_t r = 1; r < R; ++r) m = Max{}(m, x[r * inner]);
    double s = 0;
    for (int64_t r = 0; r < R; ++r) s += softmax_term(x[r * inner], m);
    out[k] = logsumexp_value(s, m);
  }
}

template <class T>
__global__ void logsumexp_block_per_row(int64_t rows, int64_t R, int64_t inner, bool, const T* in, T* out) {
  for (int64_t k = blockIdx.x; k < rows; k += gridDim.x) {
    const T* x = in + row_base(k, R, inner);
    T m = x[0];
    for (int64_t r = threadIdx.x; r < R; r += blockDim.x) m = Max{}(m, x[r * inner]);
    m = block_all_reduce(m, Max{});
    double s = 0;
    for (int64_t r = threadIdx.x; r < R; r += blockDim.x) s += softmax_term(x[r * inner], m);
    s = block_all_reduce(s, Sum{});
    if (threadIdx.x == 0) out[k] = logsumexp_value(s, m);
  }
}

// Short rows, or strided rows numerous enough to fill the device (consecutive threads then
// read consecutive j: coalesced), take a thread each; the rest a block each.
template <class... Args>
void launch_rows(void (*thread_kernel)(int64_t, int64_t, int64_t, bool, Args...),
                 void (*block_kernel)(int64_t, int64_t, int64_t, bool, Args...), int64_t outer, int64_t R,
                 int64_t inner, bool log, Args... args) {
  const int64_t rows = outer * inner;
  if (rows == 0 || R == 0) return;
  cudaStream_t stream = current_stream();
  if (R <= 64 || (inner > 1 && rows >= 8192)) {
    thread_kernel<<<grid_size(rows, kThreads), kThreads, 0, stream>>>(rows, R, inner, log, args...);
  } else {
    const auto blocks = static_cast<unsigned>(std::min<int64_t>(rows, grid_size(rows * kThreads, kThreads)));
    block_kernel<<<blocks, kThreads, 0, stream>>>(rows, R, inner, log, args...);
  }
  GR_CUDA_CHECK_LAUNCH();
}

void softmax_cuda(const void* in, void* out, int64_t outer, int64_t R, int64_t inner, ScalarType t, bool log) {
  dispatch_floating(t, log ? "log_softmax" : "softmax", [&]<class T>() {
    launch_rows(softmax_thread_per_row<T>, softmax_block_per_row<T>, outer, R, inner, log, static_cast<const T*>(in),
                static_cast<T*>(out));
  });
}

void softmax_backward_cuda(const void* grad, const void* out, void* grad_in, int64_t outer, int64_t R, int64_t inner,
                           ScalarType t, bool log) {
  dispatch_floating(t, log ? "log_softmax_backward" : "softmax_backward", [&]<class T>() {
    launch_rows(softmax_backward_thread_per_row<T>, softmax_backward_block_per_row<T>, outer, R, inner, log,
                static_cast<const T*>(grad), static_cast<const T*>(out), static_cast<T*>(grad_in));
  });
}

void logsumexp_cuda(const void* in, void* out, int64_t outer, int64_t R, int64_t inner, ScalarType t) {
  dispatch_floating(t, "logsumexp", [&]<class T>() {
    launch_rows(logsumexp_thread_per_row<T>, logsumexp_block_per_row<T>, outer, R, inner, false,
                static_cast<const T*>(in), static_cast<T*>(out));
  });
}

}  // namespace

GR_REGISTER_KERNEL(native::softmax_stub, kCUDA, &softmax_cuda);
GR_REGISTER_KERNEL(native::logsumexp_stub, kCUDA, &logsumexp_cuda);
GR_REGISTER_KERNEL(native::softmax_backward_stub, kCUDA, &softmax_backward_cuda);

}  // namespace gr::cuda
