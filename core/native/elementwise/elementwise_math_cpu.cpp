// CPU kernels of the math and comparison families: elementwise_math_kernels.h over cpu_map
// (whose contiguous inner loops vectorise for the cheap ops: clamp, square, reciprocal, the
// rounding ops, comparisons and the logical and bitwise ops).
#include "core/native/elementwise/cpu_loops.h"
#include "core/native/elementwise/elementwise_math_kernels.h"

namespace gr::native {
namespace {

struct CpuMap {
  template <class Out, class... In, class F>
  static void run(const StridedLoop& L, const F& f) {
    cpu_map<Out, In...>(L, f);
  }
};
using Kernels = MathKernels<CpuMap>;

}  // namespace

#define GR_MATH_KERNEL(stub, fn_type, kernel) \
  static ::gr::KernelRegistrar gr_math_cpu_registrar_##stub(stub##_stub, kCPU, &Kernels::kernel);
#include "core/native/elementwise/math_ops.def"

}  // namespace gr::native
