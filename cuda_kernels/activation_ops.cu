// CUDA kernels of the activations (gelu and its backward, silu, mish, leaky_relu, elu): the
// kernels of core/native/activation/activation.h, which the CPU runs over cpu_map, here over gpu_map,
// so both devices compute the same formulas.
#include "core/native/activation/activation.h"
#include "cuda_kernels/loops.cuh"

namespace gr::cuda {
namespace {

struct GpuMap {
  template <class Out, class... In, class F>
  static void run(const native::StridedLoop& L, const F& f) {
    gpu_map<Out, In...>(L, f, current_stream(), "activation");
  }
};
using Kernels = native::ActivationKernels<GpuMap>;

}  // namespace

#define GR_REGISTER_ACTIVATION_KERNEL(name) \
  static ::gr::KernelRegistrar gr_activation_cuda_registrar_##name(native::name##_stub, kCUDA, &Kernels::name);
GR_ACTIVATION_STUBS(GR_REGISTER_ACTIVATION_KERNEL)
#undef GR_REGISTER_ACTIVATION_KERNEL

}  // namespace gr::cuda
