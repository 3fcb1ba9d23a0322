// CUDA kernels of the binary element-wise ops (arithmetic, comparisons, where, and the fused
// backward formulas): each instantiates a functor of core/functors.h over gpu_map.
#include <type_traits>

#include "core/functors.h"
#include "core/native/elementwise/elementwise.h"
#include "cuda_kernels/loops.cuh"

namespace gr::cuda {
namespace {

namespace F = gr::functors;
using native::StridedLoop;

template <template <class> class Op>
void binary_cuda(const StridedLoop& L, ScalarType t, const Scalar&) {
  dispatch_arith(t, "binary op", [&]<class T>() { gpu_map<T, T, T>(L, Op<T>{}, current_stream(), "binary op"); });
}
template <template <class> class Op>
void binary_alpha_cuda(const StridedLoop& L, ScalarType t, const Scalar& alpha) {
  dispatch_arith(t, "add/sub", [&]<class T>() { gpu_map<T, T, T>(L, Op<T>{alpha.to<T>()}, current_stream(), "add/sub"); });
}
template <template <class> class Op>
void float_binary_cuda(const StridedLoop& L, ScalarType t, const Scalar& param) {
  dispatch_floating(t, "backward op", [&]<class T>() {
    if constexpr (std::is_constructible_v<Op<T>, T>) gpu_map<T, T, T>(L, Op<T>{param.to<T>()}, current_stream(), "backward op");
    else gpu_map<T, T, T>(L, Op<T>{}, current_stream(), "backward op");
  });
}
template <template <class> class Op>
void compare_cuda(const StridedLoop& L, ScalarType t, const Scalar&) {
  if (t == kBool) return gpu_map<bool, bool, bool>(L, Op<bool>{}, current_stream(), "comparison");
  dispatch_arith(t, "comparison", [&]<class T>() { gpu_map<bool, T, T>(L, Op<T>{}, current_stream(), "comparison"); });
}
void where_cuda(const StridedLoop& L, ScalarType t, const Scalar&) {
  dispatch_all(t, "where", [&]<class T>() { gpu_map<T, bool, T, T>(L, F::Where<T>{}, current_stream(), "where"); });
}

}  // namespace

// The binary kinds of core/native/elementwise/elementwise_ops.def (unary_ops.cu registers the others).
#define GR_CUDA_REGISTER(stub, kernel) GR_REGISTER_KERNEL(native::stub##_stub, kCUDA, kernel);
#define GR_ELEMENTWISE_KERNEL(stub, kind, Op) GR_CUDA_REGISTER_##kind(stub, Op)
#define GR_CUDA_REGISTER_binary(stub, Op) GR_CUDA_REGISTER(stub, &binary_cuda<F::Op>)
#define GR_CUDA_REGISTER_binary_alpha(stub, Op) GR_CUDA_REGISTER(stub, &binary_alpha_cuda<F::Op>)
#define GR_CUDA_REGISTER_float_binary(stub, Op) GR_CUDA_REGISTER(stub, &float_binary_cuda<F::Op>)
#define GR_CUDA_REGISTER_compare(stub, Op) GR_CUDA_REGISTER(stub, &compare_cuda<F::Op>)
#define GR_CUDA_REGISTER_where(stub, Op) GR_CUDA_REGISTER(stub, &where_cuda)
#define GR_CUDA_REGISTER_unary(stub, Op)
#define GR_CUDA_REGISTER_float_unary(stub, Op)
#define GR_CUDA_REGISTER_pow_scalar(stub, Op)
#include "core/native/elementwise/elementwise_ops.def"

}  // namespace gr::cuda
