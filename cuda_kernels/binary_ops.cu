// CUDA kernels of the binary element-wise ops (arithmetic, comparisons, where, and the fused
// backward formulas): each instantiates a functor of core/functors.h over gpu_map.
#include <type_traits>

#include "core/functors.h"
#include "core/native/elementwise.h"
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

GR_REGISTER_KERNEL(native::add_stub, kCUDA, &binary_alpha_cuda<F::Add>);
GR_REGISTER_KERNEL(native::sub_stub, kCUDA, &binary_alpha_cuda<F::Sub>);
GR_REGISTER_KERNEL(native::mul_stub, kCUDA, &binary_cuda<F::Mul>);
GR_REGISTER_KERNEL(native::div_stub, kCUDA, &binary_cuda<F::Div>);
GR_REGISTER_KERNEL(native::pow_stub, kCUDA, &binary_cuda<F::Pow>);
GR_REGISTER_KERNEL(native::maximum_stub, kCUDA, &binary_cuda<F::Maximum>);
GR_REGISTER_KERNEL(native::minimum_stub, kCUDA, &binary_cuda<F::Minimum>);
GR_REGISTER_KERNEL(native::eq_stub, kCUDA, &compare_cuda<F::Eq>);
GR_REGISTER_KERNEL(native::ne_stub, kCUDA, &compare_cuda<F::Ne>);
GR_REGISTER_KERNEL(native::gt_stub, kCUDA, &compare_cuda<F::Gt>);
GR_REGISTER_KERNEL(native::lt_stub, kCUDA, &compare_cuda<F::Lt>);
GR_REGISTER_KERNEL(native::ge_stub, kCUDA, &compare_cuda<F::Ge>);
GR_REGISTER_KERNEL(native::le_stub, kCUDA, &compare_cuda<F::Le>);
GR_REGISTER_KERNEL(native::where_stub, kCUDA, &where_cuda);
GR_REGISTER_KERNEL(native::relu_backward_stub, kCUDA, &float_binary_cuda<F::ReluBackward>);
GR_REGISTER_KERNEL(native::sigmoid_backward_stub, kCUDA, &float_binary_cuda<F::SigmoidBackward>);
GR_REGISTER_KERNEL(native::tanh_backward_stub, kCUDA, &float_binary_cuda<F::TanhBackward>);
GR_REGISTER_KERNEL(native::pow_scalar_backward_stub, kCUDA, &float_binary_cuda<F::PowScalarBackward>);
GR_REGISTER_KERNEL(native::abs_backward_stub, kCUDA, &float_binary_cuda<F::AbsBackward>);

}  // namespace gr::cuda
