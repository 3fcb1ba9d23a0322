// CUDA fused optimizer updates (the step stubs of core/native/optim/optimizer_steps.h):
// one grid-stride pass per parameter, or many parameters per launch for the list stubs (Note
// [Multi-tensor launches]), running the functors of core/optimizer_functors.h, the ones the
// CPU loop runs. (nvcc may fuse a multiply and an add the CPU rounds twice, so results agree
// to rounding, not bitwise.)
#include <utility>

#include "core/native/optim/optimizer_steps.h"
#include "cuda_kernels/cuda_check.h"
#include "cuda_kernels/grid_stride.cuh"
#include "cuda_kernels/multi_tensor.cuh"
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

// The list form: ptr[0] the parameters, ptr[1] the gradients, ptr[2 + B] the buffers (null
// where the functor uses none: a local dummy then, as above).
template <class T, int Depth, class F, size_t... B>
__global__ void steps_kernel(TensorListArgs<Depth> a, F f, std::index_sequence<B...>) {
  const ChunkOf<Depth> c(a);
  T* p = static_cast<T*>(a.ptr[0][c.slot]);
  const T* g = static_cast<const T*>(a.ptr[1][c.slot]);
  T* buffers[] = {static_cast<T*>(a.ptr[2 + B][c.slot])..., nullptr};
  for (int64_t i = c.begin + threadIdx.x; i < c.end; i += blockDim.x) {
    T dummy = T(0);
    f(p[i], g[i], (buffers[B] ? buffers[B][i] : dummy)...);
  }
}

template <int Depth, class T, class F>
void run_steps(const std::vector<StepOperands>& ops, const F& f) {
  std::vector<std::array<void*, Depth>> ptrs;
  std::vector<int64_t> numels;
  for (const StepOperands& o : ops) {
    std::array<void*, Depth> a{};
    for (size_t d = 0; d < Depth && d < o.size(); ++d) a[d] = o[d].defined() ? o[d].data_ptr() : nullptr;
    ptrs.push_back(a);
    numels.push_back(o[0].numel());
  }
  cudaStream_t stream = current_stream();
  multi_tensor_apply<Depth>(ptrs, numels, [&](const TensorListArgs<Depth>& a, int blocks) {
    steps_kernel<T, Depth><<<blocks, kMultiTensorThreads, 0, stream>>>(a, f, std::make_index_sequence<Depth - 2>{});
    GR_CUDA_CHECK_LAUNCH();
  });
}

void sgd_steps_cuda(const std::vector<StepOperands>& ops, const functors::SgdStep<double>& s) {
  dispatch_floating(ops.front()[0].scalar_type(), "sgd", [&]<class T>() { run_steps<3, T>(ops, functor_as<T>(s)); });
}
void adam_steps_cuda(const std::vector<StepOperands>& ops, const functors::AdamStep<double>& s) {
  dispatch_floating(ops.front()[0].scalar_type(), "adam", [&]<class T>() { run_steps<5, T>(ops, functor_as<T>(s)); });
}
void adadelta_steps_cuda(const std::vector<StepOperands>& ops, const functors::AdadeltaStep<double>& s) {
  dispatch_floating(ops.front()[0].scalar_type(), "adadelta",
                    [&]<class T>() { run_steps<4, T>(ops, functor_as<T>(s)); });
}

// RMSprop, Adagrad, Adamax, NAdam and RAdam: lists only, Depth = 2 + their buffers.
template <int Depth, class F>
void list_steps_cuda(const std::vector<StepOperands>& ops, const F& s) {
  dispatch_floating(ops.front()[0].scalar_type(), "optimizer step",
                    [&]<class T>() { run_steps<Depth, T>(ops, functor_as<T>(s)); });
}

}  // namespace

GR_REGISTER_KERNEL(native::rmsprop_steps_stub, kCUDA, (&list_steps_cuda<5, functors::RmspropStep<double>>));
GR_REGISTER_KERNEL(native::adagrad_steps_stub, kCUDA, (&list_steps_cuda<3, functors::AdagradStep<double>>));
GR_REGISTER_KERNEL(native::adamax_steps_stub, kCUDA, (&list_steps_cuda<4, functors::AdamaxStep<double>>));
GR_REGISTER_KERNEL(native::nadam_steps_stub, kCUDA, (&list_steps_cuda<4, functors::NadamStep<double>>));
GR_REGISTER_KERNEL(native::radam_steps_stub, kCUDA, (&list_steps_cuda<4, functors::RadamStep<double>>));
GR_REGISTER_KERNEL(native::sgd_steps_stub, kCUDA, &sgd_steps_cuda);
GR_REGISTER_KERNEL(native::adam_steps_stub, kCUDA, &adam_steps_cuda);
GR_REGISTER_KERNEL(native::adadelta_steps_stub, kCUDA, &adadelta_steps_cuda);
GR_REGISTER_KERNEL(native::sgd_step_stub, kCUDA, &sgd_cuda);
GR_REGISTER_KERNEL(native::adam_step_stub, kCUDA, &adam_cuda);
GR_REGISTER_KERNEL(native::adadelta_step_stub, kCUDA, &adadelta_cuda);

}  // namespace gr::cuda
