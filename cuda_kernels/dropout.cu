// CUDA dropout forward and backward (dropout_stub, dropout_backward_stub of
// core/native/activation/dropout.h). A thread per Philox block: block offset + b of subsequence 0 gives
// elements 4b..4b+3, exactly the CPU's stream, so masks and outputs are bit-identical on both
// devices.
#include "core/native/activation/dropout.h"
#include "core/philox.h"
#include "cuda_kernels/cuda_check.h"
#include "cuda_kernels/grid_stride.cuh"
#include "cuda_kernels/runtime.h"

namespace gr::cuda {
namespace {

using namespace gr::native;

constexpr int kThreads = 256;

// in/out/mask: n contiguous elements; Philox block b covers elements [4b, 4b + 4).
template <class T>
__global__ void dropout_kernel(const T* in, T* out, bool* mask, int64_t n, uint32_t threshold, T scale, uint64_t seed,
                               uint64_t offset) {
  const int64_t blocks = (n + 3) / 4;
  for (int64_t b = first_index(); b < blocks; b += grid_stride()) {
    Philox4x32 rng(seed, 0, offset + static_cast<uint64_t>(b));
    uint32_t r[4];
    rng.next(r);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const int64_t i = 4 * b + k;
      if (i < n) {
        const bool keep = dropout_keep(r[k], threshold);
        mask[i] = keep;
        out[i] = dropout_value(in[i], keep, scale);
      }
    }
  }
}

template <class T>
__global__ void dropout_backward_kernel(const T* grad, const bool* mask, T* grad_in, int64_t n, T scale) {
  for (int64_t i = first_index(); i < n; i += grid_stride()) grad_in[i] = dropout_value(grad[i], mask[i], scale);
}

void dropout_cuda(const void* in, void* out, bool* mask, int64_t n, const DropoutParams& p, ScalarType t) {
  if (n == 0) return;
  dispatch_floating(t, "dropout", [&]<class T>() {
    dropout_kernel<<<grid_size((n + 3) / 4, kThreads), kThreads, 0, current_stream()>>>(
        static_cast<const T*>(in), static_cast<T*>(out), mask, n, p.threshold, static_cast<T>(p.scale), p.seed,
        p.offset);
    GR_CUDA_CHECK_LAUNCH();
  });
}

void dropout_backward_cuda(const void* grad, const bool* mask, void* grad_in, int64_t n, double scale, ScalarType t) {
  if (n == 0) return;
  dispatch_floating(t, "dropout_backward", [&]<class T>() {
    dropout_backward_kernel<<<grid_size(n, kThreads), kThreads, 0, current_stream()>>>(
        static_cast<const T*>(grad), mask, static_cast<T*>(grad_in), n, static_cast<T>(scale));
    GR_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace

GR_REGISTER_KERNEL(native::dropout_stub, kCUDA, &dropout_cuda);
GR_REGISTER_KERNEL(native::dropout_backward_stub, kCUDA, &dropout_backward_cuda);

}  // namespace gr::cuda
