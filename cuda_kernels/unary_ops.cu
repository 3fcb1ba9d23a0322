// CUDA kernels of the unary element-wise ops: each instantiates a functor of core/functors.h
// over gpu_map.
#include <type_traits>

#include "core/functors.h"
#include "core/native/elementwise/elementwise.h"
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

// The unary kinds of core/native/elementwise/elementwise_ops.def (binary_ops.cu registers the others).
#define GR_CUDA_REGISTER(stub, kernel) GR_REGISTER_KERNEL(native::stub##_stub, kCUDA, kernel);
#define GR_ELEMENTWISE_KERNEL(stub, kind, Op) GR_CUDA_REGISTER_##kind(stub, Op)
#define GR_CUDA_REGISTER_unary(stub, Op) GR_CUDA_REGISTER(stub, &unary_cuda<F::Op>)
#define GR_CUDA_REGISTER_float_unary(stub, Op) GR_CUDA_REGISTER(stub, &float_unary_cuda<F::Op>)
#define GR_CUDA_REGISTER_pow_scalar(stub, Op) GR_CUDA_REGISTER(stub, &pow_scalar_cuda)
#define GR_CUDA_REGISTER_binary(stub, Op)
#define GR_CUDA_REGISTER_binary_alpha(stub, Op)
#define GR_CUDA_REGISTER_float_binary(stub, Op)
#define GR_CUDA_REGISTER_compare(stub, Op)
#define GR_CUDA_REGISTER_where(stub, Op)
#include "core/native/elementwise/elementwise_ops.def"

}  // namespace gr::cuda
