// CUDA kernels of the math and comparison families: each instantiates the functor of
// core/functors_math.h that the CPU kernel (core/native/elementwise_math_cpu.cpp) runs, over
// gpu_map, so both devices compute the same formulas.
#include <cmath>
#include <type_traits>

#include "core/functors_math.h"
#include "core/native/elementwise_math.h"
#include "cuda_kernels/loops.cuh"

namespace gr::cuda {
namespace {

namespace F = gr::functors;
using native::StridedLoop;

template <class Fn>
void dispatch_arith_or_bool(ScalarType t, const char* op, Fn&& fn) {
  if (t == kBool) return fn.template operator()<bool>();
  dispatch_arith(t, op, fn);
}

template <class Out, class... In, class Op>
void launch(const StridedLoop& L, const Op& op, const char* name) {
  gpu_map<Out, In...>(L, op, current_stream(), name);
}

template <template <class> class Op>
void float_unary_cuda(const StridedLoop& L, ScalarType t, const Scalar&) {
  dispatch_floating(t, "unary op", [&]<class T>() { launch<T, T>(L, Op<T>{}, "unary op"); });
}
template <template <class> class Op>
void arith_unary_cuda(const StridedLoop& L, ScalarType t, const Scalar&) {
  dispatch_arith(t, "unary op", [&]<class T>() { launch<T, T>(L, Op<T>{}, "unary op"); });
}
void sign_cuda(const StridedLoop& L, ScalarType t, const Scalar&) {
  dispatch_arith_or_bool(t, "sign", [&]<class T>() { launch<T, T>(L, F::Sign<T>{}, "sign"); });
}
void round_decimals_cuda(const StridedLoop& L, ScalarType t, const Scalar& decimals) {
  const int64_t d = decimals.to_int64();
  dispatch_floating(t, "round", [&]<class T>() {
    const T ten_pow = static_cast<T>(std::pow(10.0, static_cast<double>(d < 0 ? -d : d)));
    launch<T, T>(L, F::RoundDecimals<T>{ten_pow, d < 0}, "round");
  });
}
void softplus_cuda(const StridedLoop& L, ScalarType t, const Scalar& beta, const Scalar& threshold) {
  dispatch_floating(t, "softplus",
                    [&]<class T>() { launch<T, T>(L, F::Softplus<T>{beta.to<T>(), threshold.to<T>()}, "softplus"); });
}
void clamp_scalar_cuda(const StridedLoop& L, ScalarType t, const Scalar& lo, const Scalar& hi) {
  dispatch_arith(t, "clamp", [&]<class T>() { launch<T, T>(L, F::ClampScalar<T>{lo.to<T>(), hi.to<T>()}, "clamp"); });
}
void clamp_min_scalar_cuda(const StridedLoop& L, ScalarType t, const Scalar& lo) {
  dispatch_arith(t, "clamp_min", [&]<class T>() { launch<T, T>(L, F::ClampMinScalar<T>{lo.to<T>()}, "clamp_min"); });
}
void clamp_max_scalar_cuda(const StridedLoop& L, ScalarType t, const Scalar& hi) {
  dispatch_arith(t, "clamp_max", [&]<class T>() { launch<T, T>(L, F::ClampMaxScalar<T>{hi.to<T>()}, "clamp_max"); });
}

template <template <class> class Op>
void float_binary_cuda(const StridedLoop& L, ScalarType t, const Scalar&) {
  dispatch_floating(t, "binary op", [&]<class T>() { launch<T, T, T>(L, Op<T>{}, "binary op"); });
}
template <template <class> class Op>
void arith_binary_cuda(const StridedLoop& L, ScalarType t, const Scalar&) {
  dispatch_arith(t, "binary op", [&]<class T>() { launch<T, T, T>(L, Op<T>{}, "binary op"); });
}
void lerp_scalar_cuda(const StridedLoop& L, ScalarType t, const Scalar& w) {
  dispatch_floating(t, "lerp", [&]<class T>() { launch<T, T, T>(L, F::LerpScalar<T>{w.to<T>()}, "lerp"); });
}
void lerp_cuda(const StridedLoop& L, ScalarType t, const Scalar&) {
  dispatch_floating(t, "lerp", [&]<class T>() { launch<T, T, T, T>(L, F::Lerp<T>{}, "lerp"); });
}
void clamp_cuda(const StridedLoop& L, ScalarType t, const Scalar&) {
  dispatch_arith(t, "clamp", [&]<class T>() { launch<T, T, T, T>(L, F::Clamp<T>{}, "clamp"); });
}

template <template <class> class Op>
void predicate_binary_cuda(const StridedLoop& L, ScalarType t, const Scalar&) {
  dispatch_arith_or_bool(t, "logical op", [&]<class T>() { launch<bool, T, T>(L, Op<T>{}, "logical op"); });
}
template <template <class> class Op>
void predicate_unary_cuda(const StridedLoop& L, ScalarType t, const Scalar&) {
  dispatch_arith_or_bool(t, "predicate", [&]<class T>() { launch<bool, T>(L, Op<T>{}, "predicate"); });
}
void isclose_cuda(const StridedLoop& L, ScalarType t, double rtol, double atol, bool equal_nan) {
  dispatch_arith_or_bool(t, "isclose", [&]<class T>() {
    using Op = F::IsClose<T>;
    launch<bool, T, T>(L, Op{typename Op::F(rtol), typename Op::F(atol), equal_nan}, "isclose");
  });
}
template <template <class> class Op>
void bitwise_binary_cuda(const StridedLoop& L, ScalarType t, const Scalar&) {
  dispatch_arith_or_bool(t, "bitwise op", [&]<class T>() {
    if constexpr (std::is_integral_v<T>) launch<T, T, T>(L, Op<T>{}, "bitwise op");
    else GR_ERROR("bitwise op: not implemented for dtype ", t);
  });
}
void bitwise_not_cuda(const StridedLoop& L, ScalarType t, const Scalar&) {
  dispatch_arith_or_bool(t, "bitwise_not", [&]<class T>() {
    if constexpr (std::is_integral_v<T>) launch<T, T>(L, F::BitwiseNot<T>{}, "bitwise_not");
    else GR_ERROR("bitwise_not: not implemented for dtype ", t);
  });
}

}  // namespace

#define GR_REGISTER_FLOAT_UNARY(name, Op) GR_REGISTER_KERNEL(native::name##_stub, kCUDA, &float_unary_cuda<F::Op>);
GR_REGISTER_FLOAT_UNARY(sin, Sin)
GR_REGISTER_FLOAT_UNARY(cos, Cos)
GR_REGISTER_FLOAT_UNARY(tan, Tan)
GR_REGISTER_FLOAT_UNARY(asin, Asin)
GR_REGISTER_FLOAT_UNARY(acos, Acos)
GR_REGISTER_FLOAT_UNARY(atan, Atan)
GR_REGISTER_FLOAT_UNARY(sinh, Sinh)
GR_REGISTER_FLOAT_UNARY(cosh, Cosh)
GR_REGISTER_FLOAT_UNARY(erf, Erf)
GR_REGISTER_FLOAT_UNARY(erfc, Erfc)
GR_REGISTER_FLOAT_UNARY(erfinv, Erfinv)
GR_REGISTER_FLOAT_UNARY(rsqrt, Rsqrt)
GR_REGISTER_FLOAT_UNARY(reciprocal, Reciprocal)
GR_REGISTER_FLOAT_UNARY(log1p, Log1p)
GR_REGISTER_FLOAT_UNARY(expm1, Expm1)
GR_REGISTER_FLOAT_UNARY(log2, Log2)
GR_REGISTER_FLOAT_UNARY(log10, Log10)
GR_REGISTER_FLOAT_UNARY(frac, Frac)
#undef GR_REGISTER_FLOAT_UNARY
GR_REGISTER_KERNEL(native::square_stub, kCUDA, &arith_unary_cuda<F::Square>);
GR_REGISTER_KERNEL(native::floor_stub, kCUDA, &arith_unary_cuda<F::Floor>);
GR_REGISTER_KERNEL(native::ceil_stub, kCUDA, &arith_unary_cuda<F::Ceil>);
GR_REGISTER_KERNEL(native::round_stub, kCUDA, &arith_unary_cuda<F::Round>);
GR_REGISTER_KERNEL(native::trunc_stub, kCUDA, &arith_unary_cuda<F::Trunc>);
GR_REGISTER_KERNEL(native::sign_stub, kCUDA, &sign_cuda);
GR_REGISTER_KERNEL(native::round_decimals_stub, kCUDA, &round_decimals_cuda);
GR_REGISTER_KERNEL(native::softplus_stub, kCUDA, &softplus_cuda);
GR_REGISTER_KERNEL(native::clamp_scalar_stub, kCUDA, &clamp_scalar_cuda);
GR_REGISTER_KERNEL(native::clamp_min_scalar_stub, kCUDA, &clamp_min_scalar_cuda);
GR_REGISTER_KERNEL(native::clamp_max_scalar_stub, kCUDA, &clamp_max_scalar_cuda);
GR_REGISTER_KERNEL(native::atan2_stub, kCUDA, &float_binary_cuda<F::Atan2>);
GR_REGISTER_KERNEL(native::hypot_stub, kCUDA, &float_binary_cuda<F::Hypot>);
GR_REGISTER_KERNEL(native::fmod_stub, kCUDA, &arith_binary_cuda<F::Fmod>);
GR_REGISTER_KERNEL(native::remainder_stub, kCUDA, &arith_binary_cuda<F::Remainder>);
GR_REGISTER_KERNEL(native::lerp_scalar_stub, kCUDA, &lerp_scalar_cuda);
GR_REGISTER_KERNEL(native::lerp_stub, kCUDA, &lerp_cuda);
GR_REGISTER_KERNEL(native::clamp_stub, kCUDA, &clamp_cuda);
GR_REGISTER_KERNEL(native::logical_and_stub, kCUDA, &predicate_binary_cuda<F::LogicalAnd>);
GR_REGISTER_KERNEL(native::logical_or_stub, kCUDA, &predicate_binary_cuda<F::LogicalOr>);
GR_REGISTER_KERNEL(native::logical_xor_stub, kCUDA, &predicate_binary_cuda<F::LogicalXor>);
GR_REGISTER_KERNEL(native::logical_not_stub, kCUDA, &predicate_unary_cuda<F::LogicalNot>);
GR_REGISTER_KERNEL(native::isnan_stub, kCUDA, &predicate_unary_cuda<F::IsNan>);
GR_REGISTER_KERNEL(native::isinf_stub, kCUDA, &predicate_unary_cuda<F::IsInf>);
GR_REGISTER_KERNEL(native::isfinite_stub, kCUDA, &predicate_unary_cuda<F::IsFinite>);
GR_REGISTER_KERNEL(native::isclose_stub, kCUDA, &isclose_cuda);
GR_REGISTER_KERNEL(native::bitwise_and_stub, kCUDA, &bitwise_binary_cuda<F::BitwiseAnd>);
GR_REGISTER_KERNEL(native::bitwise_or_stub, kCUDA, &bitwise_binary_cuda<F::BitwiseOr>);
GR_REGISTER_KERNEL(native::bitwise_xor_stub, kCUDA, &bitwise_binary_cuda<F::BitwiseXor>);
GR_REGISTER_KERNEL(native::bitwise_not_stub, kCUDA, &bitwise_not_cuda);

}  // namespace gr::cuda
