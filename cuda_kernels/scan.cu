// CUDA cumsum/cumprod (core/native/reduce/scan.h's stubs): a thread per (outer, inner) column runs
// its R elements in order with the op of core/reduce_functors.h, accumulating in acc_t as the
// CPU does, so both devices round identically. Consecutive threads take consecutive columns
// (coalesced when inner > 1); a long single row runs on one thread.
#include <type_traits>

#include "core/native/reduce/scan.h"
#include "cuda_kernels/reduce.cuh"

namespace gr::cuda {
namespace {

namespace ops = gr::reduce_ops;

// Shapes: in, out [outer, R, inner] contiguous; k = o * inner + j.
template <class In, class Out, class Op>
__global__ void scan_kernel(const In* in, Out* out, int64_t outer, int64_t R, int64_t inner, bool reverse, Op op) {
  using Acc = decltype(op.identity());
  const functors::Convert<Out, Acc> cvt;
  const int64_t n = outer * inner;
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += step) {
    const int64_t base = (k / inner) * R * inner + k % inner;
    Acc acc = op.identity();
    for (int64_t s = 0; s < R; ++s) {
      const int64_t at = base + (reverse ? R - 1 - s : s) * inner;
      acc = op.reduce(acc, reduce_load(in + at));
      out[at] = cvt(acc);
    }
  }
}

template <template <class> class Op>
void scan_cuda(const void* in, void* out, int64_t outer, int64_t R, int64_t inner, ScalarType t, bool reverse) {
  const int64_t n = outer * inner;
  if (n == 0 || R == 0) return;
  dispatch_all(t, "cumsum/cumprod", [&]<class In>() {
    using Out = ops::sum_out_t<In>;
    scan_kernel<<<grid_size(n, kReduceThreads), kReduceThreads, 0, current_stream()>>>(
        static_cast<const In*>(in), static_cast<Out*>(out), outer, R, inner, reverse, Op<ops::acc_t<In>>{});
    GR_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace

GR_REGISTER_KERNEL(native::cumsum_stub, kCUDA, &scan_cuda<ops::Sum>);
GR_REGISTER_KERNEL(native::cumprod_stub, kCUDA, &scan_cuda<ops::Prod>);

}  // namespace gr::cuda
