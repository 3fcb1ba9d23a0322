// The activation ops' native forms and their CPU kernels: ActivationKernels (activation.h)
// over cpu_map, whose contiguous inner loops vectorise.
#include "core/native/activation/activation.h"

#include <string_view>

#include "core/native/elementwise/cpu_loops.h"
#include "core/native/elementwise/elementwise_run.h"

namespace gr::native {

#define GR_DEFINE_ACTIVATION_STUB(name) GR_DEFINE_DISPATCH(ActivationFn, name##_stub);
GR_ACTIVATION_STUBS(GR_DEFINE_ACTIVATION_STUB)
#undef GR_DEFINE_ACTIVATION_STUB

namespace {

struct CpuMap {
  template <class Out, class... In, class F>
  static void run(const StridedLoop& L, const F& f) {
    cpu_map<Out, In...>(L, f);
  }
};
using Kernels = ActivationKernels<CpuMap>;


Scalar gelu_mode(std::string_view approximate) {
  GR_CHECK(approximate == "none" || approximate == "tanh", "gelu: approximate must be \"none\" or \"tanh\", got \"",
           approximate, "\"");
  return Scalar(static_cast<int64_t>(approximate == "tanh"));
}

const Scalar kUnused(0);

}  // namespace

#define GR_REGISTER_ACTIVATION_KERNEL(name) \
  static ::gr::KernelRegistrar gr_activation_cpu_registrar_##name(name##_stub, kCPU, &Kernels::name);
GR_ACTIVATION_STUBS(GR_REGISTER_ACTIVATION_KERNEL)
#undef GR_REGISTER_ACTIVATION_KERNEL

Tensor gelu(const Tensor& x, std::string_view approximate) {
  const Scalar mode = gelu_mode(approximate);
  check_floating("gelu", x);
  return run_unary(gelu_stub, x, x.scalar_type(), mode, kUnused, kUnused);
}

Tensor gelu_backward(const Tensor& grad, const Tensor& x, std::string_view approximate) {
  const Scalar mode = gelu_mode(approximate);
  check_floating("gelu_backward", x);
  return run_binary(gelu_backward_stub, "gelu_backward", grad, x, x.scalar_type(), x.scalar_type(), mode, kUnused,
                    kUnused);
}

Tensor silu(const Tensor& x) {
  check_floating("silu", x);
  return run_unary(silu_stub, x, x.scalar_type(), kUnused, kUnused, kUnused);
}

Tensor mish(const Tensor& x) {
  check_floating("mish", x);
  return run_unary(mish_stub, x, x.scalar_type(), kUnused, kUnused, kUnused);
}

Tensor leaky_relu(const Tensor& x, const Scalar& negative_slope) {
  check_floating("leaky_relu", x);
  return run_unary(leaky_relu_stub, x, x.scalar_type(), negative_slope, kUnused, kUnused);
}

Tensor elu(const Tensor& x, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale) {
  check_floating("elu", x);
  return run_unary(elu_stub, x, x.scalar_type(), alpha, scale, input_scale);
}

}  // namespace gr::native
