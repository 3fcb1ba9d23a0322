// The kernels of the math and comparison families, written once over a device's element-wise
// map (cpu_map or gpu_map) with the functors of core/functors_math.h. Which stub gets which
// kernel is the family's list (core/native/elementwise/math_ops.def, read with GR_MATH_KERNEL), which
// elementwise_math_cpu.cpp and cuda_kernels/math_ops.cu both register.
// Map::template run<Out, In...>(loop, f) writes out = f(in...) on its device.
#pragma once

#include <cmath>
#include <type_traits>

#include "core/functors_math.h"
#include "core/native/elementwise/elementwise_math.h"

namespace gr::native {

template <class Map>
struct MathKernels {
  template <class Fn>
  static void arith_or_bool(ScalarType t, const char* op, Fn&& fn) {
    if (t == kBool) return fn.template operator()<bool>();
    dispatch_arith(t, op, fn);
  }

  // ---- one input ----
  template <template <class> class Op>
  static void float_unary(const StridedLoop& L, ScalarType t, const Scalar&) {
    dispatch_floating(t, "unary op", [&]<class T>() { Map::template run<T, T>(L, Op<T>{}); });
  }
  template <template <class> class Op>
  static void arith_unary(const StridedLoop& L, ScalarType t, const Scalar&) {
    dispatch_arith(t, "unary op", [&]<class T>() { Map::template run<T, T>(L, Op<T>{}); });
  }
  template <template <class> class Op>
  static void any_unary(const StridedLoop& L, ScalarType t, const Scalar&) {  // bool too (sign)
    arith_or_bool(t, "unary op", [&]<class T>() { Map::template run<T, T>(L, Op<T>{}); });
  }
  template <template <class> class Op>
  static void predicate(const StridedLoop& L, ScalarType t, const Scalar&) {
    arith_or_bool(t, "predicate", [&]<class T>() { Map::template run<bool, T>(L, Op<T>{}); });
  }
  static void round_decimals(const StridedLoop& L, ScalarType t, const Scalar& decimals) {
    const int64_t d = decimals.to_int64();
    const double ten_pow = std::pow(10.0, static_cast<double>(d < 0 ? -d : d));
    dispatch_floating(t, "round", [&]<class T>() {
      Map::template run<T, T>(L, functors::RoundDecimals<T>{static_cast<T>(ten_pow), d < 0});
    });
  }
  static void softplus(const StridedLoop& L, ScalarType t, const Scalar& beta, const Scalar& threshold) {
    dispatch_floating(t, "softplus", [&]<class T>() {
      Map::template run<T, T>(L, functors::Softplus<T>{beta.to<T>(), threshold.to<T>()});
    });
  }
  static void clamp_scalar(const StridedLoop& L, ScalarType t, const Scalar& lo, const Scalar& hi) {
    dispatch_arith(t, "clamp", [&]<class T>() { Map::template run<T, T>(L, functors::ClampScalar<T>{lo.to<T>(), hi.to<T>()}); });
  }
  static void clamp_min_scalar(const StridedLoop& L, ScalarType t, const Scalar& lo) {
    dispatch_arith(t, "clamp_min", [&]<class T>() { Map::template run<T, T>(L, functors::ClampMinScalar<T>{lo.to<T>()}); });
  }
  static void clamp_max_scalar(const StridedLoop& L, ScalarType t, const Scalar& hi) {
    dispatch_arith(t, "clamp_max", [&]<class T>() { Map::template run<T, T>(L, functors::ClampMaxScalar<T>{hi.to<T>()}); });
  }

  // ---- two or three inputs ----
  template <template <class> class Op>
  static void float_binary(const StridedLoop& L, ScalarType t, const Scalar&) {
    dispatch_floating(t, "binary op", [&]<class T>() { Map::template run<T, T, T>(L, Op<T>{}); });
  }
  template <template <class> class Op>
  static void arith_binary(const StridedLoop& L, ScalarType t, const Scalar&) {
    dispatch_arith(t, "binary op", [&]<class T>() { Map::template run<T, T, T>(L, Op<T>{}); });
  }
  template <template <class> class Op>
  static void predicate_binary(const StridedLoop& L, ScalarType t, const Scalar&) {
    arith_or_bool(t, "logical op", [&]<class T>() { Map::template run<bool, T, T>(L, Op<T>{}); });
  }
  // bool and integers only (the callers refuse floats).
  template <template <class> class Op>
  static void bitwise(const StridedLoop& L, ScalarType t, const Scalar&) {
    arith_or_bool(t, "bitwise op", [&]<class T>() {
      if constexpr (std::is_integral_v<T>) Map::template run<T, T, T>(L, Op<T>{});
      else GR_ERROR("bitwise op: not implemented for dtype ", t);
    });
  }
  static void bitwise_not(const StridedLoop& L, ScalarType t, const Scalar&) {
    arith_or_bool(t, "bitwise_not", [&]<class T>() {
      if constexpr (std::is_integral_v<T>) Map::template run<T, T>(L, functors::BitwiseNot<T>{});
      else GR_ERROR("bitwise_not: not implemented for dtype ", t);
    });
  }
  static void lerp_scalar(const StridedLoop& L, ScalarType t, const Scalar& w) {
    dispatch_floating(t, "lerp", [&]<class T>() { Map::template run<T, T, T>(L, functors::LerpScalar<T>{w.to<T>()}); });
  }
  static void lerp(const StridedLoop& L, ScalarType t, const Scalar&) {
    dispatch_floating(t, "lerp", [&]<class T>() { Map::template run<T, T, T, T>(L, functors::Lerp<T>{}); });
  }
  static void clamp(const StridedLoop& L, ScalarType t, const Scalar&) {
    dispatch_arith(t, "clamp", [&]<class T>() { Map::template run<T, T, T, T>(L, functors::Clamp<T>{}); });
  }
  static void isclose(const StridedLoop& L, ScalarType t, double rtol, double atol, bool equal_nan) {
    arith_or_bool(t, "isclose", [&]<class T>() {
      using Op = functors::IsClose<T>;
      Map::template run<bool, T, T>(L, Op{typename Op::F(rtol), typename Op::F(atol), equal_nan});
    });
  }
};

}  // namespace gr::native
