// CUDA kernels of the math and comparison families: the kernels of
// core/native/elementwise/elementwise_math_kernels.h, which the CPU runs over cpu_map, here over gpu_map,
// so both devices compute the same formulas (core/functors_math.h).
#include "core/native/elementwise/elementwise_math_kernels.h"
#include "cuda_kernels/loops.cuh"

namespace gr::cuda {
namespace {

struct GpuMap {
  template <class Out, class... In, class F>
  static void run(const native::StridedLoop& L, const F& f) {
    gpu_map<Out, In...>(L, f, current_stream(), "math op");
  }
};
using Kernels = native::MathKernels<GpuMap>;

}  // namespace

// The stubs and kernels of core/native/math_ops.def.
#define GR_MATH_KERNEL(stub, fn_type, kernel) \
  static ::gr::KernelRegistrar gr_math_cuda_registrar_##stub(native::stub##_stub, kCUDA, &Kernels::kernel);
#include "core/native/elementwise/math_ops.def"

}  // namespace gr::cuda
