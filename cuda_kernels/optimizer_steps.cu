// CUDA fused optimizer updates (sgd/adam/adadelta_step_stub of core/native/optim/optimizer_steps.h):
// one grid-stride pass per parameter running the functors of core/optimizer_functors.h, the
// ones the CPU loop runs. (nvcc may fuse a multiply and an add the CPU rounds twice, so
// results agree to rounding, not bitwise.)
#include "core/native/optim/optimizer_steps.h"
#include "cuda_kernels/cuda_check.h"
#include "cuda_kernels/grid_stride.cuh"
#include "cuda_kernels/runtime.h"

namespace gr::cuda {
namespace {

using namespace gr::native;

constexpr int kThreads = 256;

// param, grad and every buffer: n contiguous elements. A null buffer is one the functor
// does not use (momentum 0, no amsgrad): it gets a local dummy, as on the CPU.
template <class T, class F, class... Buffers>
__global__ void step_kernel(T* param, const T* grad, int64_t n, F f, Buffers... buffers) {
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    T dummy = T(0);
    f(param[i], grad[i], (buffers ? buffers[i] : dummy)...);
  }
}

template <class T, class F, class... Buffers>
void run(const Tensor& param, const Tensor& grad, const F& f, Buffers... buffers) {
  const int64_t n = param.numel();
  if (n == 0) return;
  step_kernel<<<grid_size(n, kThreads), kThreads, 0, current_stream()>>>(param.data_ptr<T>(), grad.data_ptr<T>(), n, f,
                                                                         buffers...);
  GR_CUDA_CHECK_LAUNCH();
}

void sgd_cuda(const Tensor& p, const Tensor& g, const Tensor& buf, const functors::SgdStep<double>& s) {
  dispatch_floating(p.scalar_type(), "sgd", [&]<class T>() { run<T>(p, g, functor_as<T>(s), ptr_or_null<T>(buf)); });
}
void adam_cuda(const Tensor& p, const Tensor& g, const Tensor& m, const Tensor& v, const Tensor& vmax,
               const functors::AdamStep<double>& s) {
  dispatch_floating(p.scalar_type(), "adam", [&]<class T>() {
    run<T>(p, g, functor_as<T>(s), ptr_or_null<T>(m), ptr_or_null<T>(v), ptr_or_null<T>(vmax));
  });
}
void adadelta_cuda(const Tensor& p, const Tensor& g, const Tensor& sq, const Tensor& acc,
                   const functors::AdadeltaStep<double>& s) {
  dispatch_floating(p.scalar_type(), "adadelta",
                    [&]<class T>() { run<T>(p, g, functor_as<T>(s), ptr_or_null<T>(sq), ptr_or_null<T>(acc)); });
}

}  // namespace

GR_REGISTER_KERNEL(native::sgd_step_stub, kCUDA, &sgd_cuda);
GR_REGISTER_KERNEL(native::adam_step_stub, kCUDA, &adam_cuda);
GR_REGISTER_KERNEL(native::adadelta_step_stub, kCUDA, &adadelta_cuda);

}  // namespace gr::cuda
