// CUDA kernels of the unary element-wise ops: each instantiates a functor of core/functors.h
// over gpu_map.
#include <type_traits>

#include "core/functors.h"
#include "core/native/elementwise.h"
#include "cuda_kernels/loops.cuh"

namespace gr::cuda {
namespace {

namespace F = gr::functors;
using native::StridedLoop;

// x^n for integer tensors (the exponent was checked to be >= 0 by the caller).
template <class T>
struct IntPowScalar {
  int64_t exponent;
  GR_HOST_DEVICE T operator()(T a) const { return math::ipow(a, exponent); }
};

template <template <class> class Op>
void unary_cuda(const StridedLoop& L, ScalarType t, const Scalar&) {
  dispatch_arith(t, "unary op", [&]<class T>() { gpu_map<T, T>(L, Op<T>{}, current_stream(), "unary op"); });
}
template <template <class> class Op>
void float_unary_cuda(const StridedLoop& L, ScalarType t, const Scalar&) {
  dispatch_floating(t, "unary op", [&]<class T>() { gpu_map<T, T>(L, Op<T>{}, current_stream(), "unary op"); });
}
void pow_scalar_cuda(const StridedLoop& L, ScalarType t, const Scalar& e) {
  dispatch_arith(t, "pow", [&]<class T>() {
    if constexpr (std::is_floating_point_v<T>) gpu_map<T, T>(L, F::PowScalar<T>{e.to<T>()}, current_stream(), "pow");
    else gpu_map<T, T>(L, IntPowScalar<T>{e.to_int64()}, current_stream(), "pow");
  });
}

}  // namespace

GR_REGISTER_KERNEL(native::neg_stub, kCUDA, &unary_cuda<F::Neg>);
GR_REGISTER_KERNEL(native::abs_stub, kCUDA, &unary_cuda<F::Abs>);
GR_REGISTER_KERNEL(native::relu_stub, kCUDA, &unary_cuda<F::Relu>);
GR_REGISTER_KERNEL(native::exp_stub, kCUDA, &float_unary_cuda<F::Exp>);
GR_REGISTER_KERNEL(native::log_stub, kCUDA, &float_unary_cuda<F::Log>);
GR_REGISTER_KERNEL(native::sqrt_stub, kCUDA, &float_unary_cuda<F::Sqrt>);
GR_REGISTER_KERNEL(native::sigmoid_stub, kCUDA, &float_unary_cuda<F::Sigmoid>);
GR_REGISTER_KERNEL(native::tanh_stub, kCUDA, &float_unary_cuda<F::Tanh>);
GR_REGISTER_KERNEL(native::pow_scalar_stub, kCUDA, &pow_scalar_cuda);

}  // namespace gr::cuda
