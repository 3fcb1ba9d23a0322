// CUDA tap-table kernel (apply_taps_stub, Note [Taps] in core/native/shape/resample.h): a thread per
// output element gathers its row's taps, the same taps_at the CPU runs; padding and
// interpolation forward and backward all come here, so there are no atomics.
#include "core/native/shape/resample.h"
#include "cuda_kernels/cuda_check.h"
#include "cuda_kernels/grid_stride.cuh"
#include "cuda_kernels/runtime.h"

namespace gr::cuda {
namespace {

using native::TapsArgs;

constexpr int kThreads = 256;

// in [outer, cols, inner], out [outer, rows, inner]; k = (a * rows + r) * inner + b.
template <class T>
__global__ void apply_taps_kernel(const T* in, T* out, const int64_t* start, const int64_t* index, const T* weight,
                                  TapsArgs a) {
  for (int64_t k = first_index(), n = a.outer * a.rows * a.inner; k < n; k += grid_stride()) {
    const int64_t b = k % a.inner, q = k / a.inner;
    out[k] = native::taps_at(in, start, index, weight, a.cols, a.inner, q / a.rows, q % a.rows, b);
  }
}

void apply_taps_cuda(const void* in, void* out, const int64_t* start, const int64_t* index, const void* weight,
                     const TapsArgs& a, ScalarType t) {
  const int64_t n = a.outer * a.rows * a.inner;
  if (n == 0) return;
  dispatch_floating(t, "apply_taps", [&]<class T>() {
    apply_taps_kernel<T><<<grid_size(n, kThreads), kThreads, 0, current_stream()>>>(
        static_cast<const T*>(in), static_cast<T*>(out), start, index, static_cast<const T*>(weight), a);
    GR_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace

GR_REGISTER_KERNEL(native::apply_taps_stub, kCUDA, &apply_taps_cuda);

}  // namespace gr::cuda
