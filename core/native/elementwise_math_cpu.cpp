// CPU kernels of the math and comparison families: each instantiates a functor of
// core/functors_math.h over cpu_map (whose contiguous inner loops vectorise for the cheap ones).
#include <cmath>
#include <type_traits>

#include "core/functors_math.h"
#include "core/native/cpu_loops.h"
#include "core/native/elementwise_math.h"

namespace gr::native {
namespace {

namespace F = gr::functors;

// Arithmetic dtypes plus bool.
template <class Fn>
void dispatch_arith_or_bool(ScalarType t, const char* op, Fn&& fn) {
  if (t == kBool) return fn.template operator()<bool>();
  dispatch_arith(t, op, fn);
}

template <template <class> class Op>
void float_unary_cpu(const StridedLoop& L, ScalarType t, const Scalar&) {
  dispatch_floating(t, "unary op", [&]<class T>() { cpu_map<T, T>(L, Op<T>{}); });
}
template <template <class> class Op>
void arith_unary_cpu(const StridedLoop& L, ScalarType t, const Scalar&) {
  dispatch_arith(t, "unary op", [&]<class T>() { cpu_map<T, T>(L, Op<T>{}); });
}
void sign_cpu(const StridedLoop& L, ScalarType t, const Scalar&) {
  dispatch_arith_or_bool(t, "sign", [&]<class T>() { cpu_map<T, T>(L, F::Sign<T>{}); });
}
void round_decimals_cpu(const StridedLoop& L, ScalarType t, const Scalar& decimals) {
  const int64_t d = decimals.to_int64();
  dispatch_floating(t, "round", [&]<class T>() {
    cpu_map<T, T>(L, F::RoundDecimals<T>{static_cast<T>(std::pow(10.0, static_cast<double>(d < 0 ? -d : d))), d < 0});
  });
}
void softplus_cpu(const StridedLoop& L, ScalarType t, const Scalar& beta, const Scalar& threshold) {
  dispatch_floating(t, "softplus", [&]<class T>() { cpu_map<T, T>(L, F::Softplus<T>{beta.to<T>(), threshold.to<T>()}); });
}
void clamp_scalar_cpu(const StridedLoop& L, ScalarType t, const Scalar& lo, const Scalar& hi) {
  dispatch_arith(t, "clamp", [&]<class T>() { cpu_map<T, T>(L, F::ClampScalar<T>{lo.to<T>(), hi.to<T>()}); });
}
void clamp_min_scalar_cpu(const StridedLoop& L, ScalarType t, const Scalar& lo) {
  dispatch_arith(t, "clamp_min", [&]<class T>() { cpu_map<T, T>(L, F::ClampMinScalar<T>{lo.to<T>()}); });
}
void clamp_max_scalar_cpu(const StridedLoop& L, ScalarType t, const Scalar& hi) {
  dispatch_arith(t, "clamp_max", [&]<class T>() { cpu_map<T, T>(L, F::ClampMaxScalar<T>{hi.to<T>()}); });
}

template <template <class> class Op>
void float_binary_cpu(const StridedLoop& L, ScalarType t, const Scalar&) {
  dispatch_floating(t, "binary op", [&]<class T>() { cpu_map<T, T, T>(L, Op<T>{}); });
}
template <template <class> class Op>
void arith_binary_cpu(const StridedLoop& L, ScalarType t, const Scalar&) {
  dispatch_arith(t, "binary op", [&]<class T>() { cpu_map<T, T, T>(L, Op<T>{}); });
}
void lerp_scalar_cpu(const StridedLoop& L, ScalarType t, const Scalar& w) {
  dispatch_floating(t, "lerp", [&]<class T>() { cpu_map<T, T, T>(L, F::LerpScalar<T>{w.to<T>()}); });
}
void lerp_cpu(const StridedLoop& L, ScalarType t, const Scalar&) {
  dispatch_floating(t, "lerp", [&]<class T>() { cpu_map<T, T, T, T>(L, F::Lerp<T>{}); });
}
void clamp_cpu(const StridedLoop& L, ScalarType t, const Scalar&) {
  dispatch_arith(t, "clamp", [&]<class T>() { cpu_map<T, T, T, T>(L, F::Clamp<T>{}); });
}

// bool results.
template <template <class> class Op>
void predicate_binary_cpu(const StridedLoop& L, ScalarType t, const Scalar&) {
  dispatch_arith_or_bool(t, "logical op", [&]<class T>() { cpu_map<bool, T, T>(L, Op<T>{}); });
}
template <template <class> class Op>
void predicate_unary_cpu(const StridedLoop& L, ScalarType t, const Scalar&) {
  dispatch_arith_or_bool(t, "predicate", [&]<class T>() { cpu_map<bool, T>(L, Op<T>{}); });
}
void isclose_cpu(const StridedLoop& L, ScalarType t, double rtol, double atol, bool equal_nan) {
  dispatch_arith_or_bool(t, "isclose", [&]<class T>() {
    using Op = F::IsClose<T>;
    cpu_map<bool, T, T>(L, Op{typename Op::F(rtol), typename Op::F(atol), equal_nan});
  });
}

// bool and integers only (the callers refuse floats).
template <template <class> class Op>
void bitwise_binary_cpu(const StridedLoop& L, ScalarType t, const Scalar&) {
  dispatch_arith_or_bool(t, "bitwise op", [&]<class T>() {
    if constexpr (std::is_integral_v<T>) cpu_map<T, T, T>(L, Op<T>{});
    else GR_ERROR("bitwise op: not implemented for dtype ", t);
  });
}
void bitwise_not_cpu(const StridedLoop& L, ScalarType t, const Scalar&) {
  dispatch_arith_or_bool(t, "bitwise_not", [&]<class T>() {
    if constexpr (std::is_integral_v<T>) cpu_map<T, T>(L, F::BitwiseNot<T>{});
    else GR_ERROR("bitwise_not: not implemented for dtype ", t);
  });
}

}  // namespace

#define GR_REGISTER_FLOAT_UNARY(name, Op) GR_REGISTER_KERNEL(name##_stub, kCPU, &float_unary_cpu<F::Op>);
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
GR_REGISTER_KERNEL(square_stub, kCPU, &arith_unary_cpu<F::Square>);
GR_REGISTER_KERNEL(floor_stub, kCPU, &arith_unary_cpu<F::Floor>);
GR_REGISTER_KERNEL(ceil_stub, kCPU, &arith_unary_cpu<F::Ceil>);
GR_REGISTER_KERNEL(round_stub, kCPU, &arith_unary_cpu<F::Round>);
GR_REGISTER_KERNEL(trunc_stub, kCPU, &arith_unary_cpu<F::Trunc>);
GR_REGISTER_KERNEL(sign_stub, kCPU, &sign_cpu);
GR_REGISTER_KERNEL(round_decimals_stub, kCPU, &round_decimals_cpu);
GR_REGISTER_KERNEL(softplus_stub, kCPU, &softplus_cpu);
GR_REGISTER_KERNEL(clamp_scalar_stub, kCPU, &clamp_scalar_cpu);
GR_REGISTER_KERNEL(clamp_min_scalar_stub, kCPU, &clamp_min_scalar_cpu);
GR_REGISTER_KERNEL(clamp_max_scalar_stub, kCPU, &clamp_max_scalar_cpu);
GR_REGISTER_KERNEL(atan2_stub, kCPU, &float_binary_cpu<F::Atan2>);
GR_REGISTER_KERNEL(hypot_stub, kCPU, &float_binary_cpu<F::Hypot>);
GR_REGISTER_KERNEL(fmod_stub, kCPU, &arith_binary_cpu<F::Fmod>);
GR_REGISTER_KERNEL(remainder_stub, kCPU, &arith_binary_cpu<F::Remainder>);
GR_REGISTER_KERNEL(lerp_scalar_stub, kCPU, &lerp_scalar_cpu);
GR_REGISTER_KERNEL(lerp_stub, kCPU, &lerp_cpu);
GR_REGISTER_KERNEL(clamp_stub, kCPU, &clamp_cpu);
GR_REGISTER_KERNEL(logical_and_stub, kCPU, &predicate_binary_cpu<F::LogicalAnd>);
GR_REGISTER_KERNEL(logical_or_stub, kCPU, &predicate_binary_cpu<F::LogicalOr>);
GR_REGISTER_KERNEL(logical_xor_stub, kCPU, &predicate_binary_cpu<F::LogicalXor>);
GR_REGISTER_KERNEL(logical_not_stub, kCPU, &predicate_unary_cpu<F::LogicalNot>);
GR_REGISTER_KERNEL(isnan_stub, kCPU, &predicate_unary_cpu<F::IsNan>);
GR_REGISTER_KERNEL(isinf_stub, kCPU, &predicate_unary_cpu<F::IsInf>);
GR_REGISTER_KERNEL(isfinite_stub, kCPU, &predicate_unary_cpu<F::IsFinite>);
GR_REGISTER_KERNEL(isclose_stub, kCPU, &isclose_cpu);
GR_REGISTER_KERNEL(bitwise_and_stub, kCPU, &bitwise_binary_cpu<F::BitwiseAnd>);
GR_REGISTER_KERNEL(bitwise_or_stub, kCPU, &bitwise_binary_cpu<F::BitwiseOr>);
GR_REGISTER_KERNEL(bitwise_xor_stub, kCPU, &bitwise_binary_cpu<F::BitwiseXor>);
GR_REGISTER_KERNEL(bitwise_not_stub, kCPU, &bitwise_not_cpu);

}  // namespace gr::native
