// Element-wise math of the breadth ops (trigonometry, special functions, rounding, modulo,
// clamp, lerp, comparisons' logical and bitwise forms), written once as GR_HOST_DEVICE
// functors that the CPU loops and the CUDA kernels both call. T is the compute type; the
// formulas follow ATen's CPU kernels, special values included (see the reference tests).
#pragma once

#include <math.h>

#include <type_traits>

#include "core/functors.h"

namespace gr::math {
// Overloads that resolve to the C library on the host and to CUDA's math on the device.
#define GR_MATH_UNARY(name)                                                  \
  GR_HOST_DEVICE GR_INLINE float name(float x) { return ::name##f(x); }      \
  GR_HOST_DEVICE GR_INLINE double name(double x) { return ::name(x); }
GR_MATH_UNARY(tan)
GR_MATH_UNARY(asin)
GR_MATH_UNARY(acos)
GR_MATH_UNARY(atan)
GR_MATH_UNARY(sinh)
GR_MATH_UNARY(cosh)
GR_MATH_UNARY(erf)
GR_MATH_UNARY(erfc)
GR_MATH_UNARY(log1p)
GR_MATH_UNARY(expm1)
GR_MATH_UNARY(log2)
GR_MATH_UNARY(log10)
GR_MATH_UNARY(floor)
GR_MATH_UNARY(ceil)
GR_MATH_UNARY(trunc)
GR_MATH_UNARY(nearbyint)  // round half to even, as torch.round
#undef GR_MATH_UNARY
#define GR_MATH_BINARY(name)                                                            \
  GR_HOST_DEVICE GR_INLINE float name(float x, float y) { return ::name##f(x, y); }     \
  GR_HOST_DEVICE GR_INLINE double name(double x, double y) { return ::name(x, y); }
GR_MATH_BINARY(atan2)
GR_MATH_BINARY(fmod)
GR_MATH_BINARY(hypot)
GR_MATH_BINARY(copysign)
#undef GR_MATH_BINARY

template <class T>
inline constexpr bool is_integral_v = std::is_integral_v<T>;  // bool included
template <class T>
inline constexpr bool is_signed_int_v = std::is_integral_v<T> && std::is_signed_v<T>;

// The inverse error function, as ATen's calc_erfinv: a rational approximation (central range
// |y| <= 0.7, then the tails), refined by two Newton steps on erf(x) - y.
template <class T>
GR_HOST_DEVICE GR_INLINE T erfinv(T y) {
  const T y_abs = math::fabs(y);
  if (y_abs > T(1)) return T(NAN);
  if (y_abs == T(1)) return math::copysign(T(INFINITY), y);
  T x;
  if (y_abs <= T(0.7)) {
    const T z = y * y;
    const T num = ((T(-0.140543331) * z + T(0.914624893)) * z + T(-1.645349621)) * z + T(0.886226899);
    const T den = (((T(0.012229801) * z + T(-0.329097515)) * z + T(1.442710462)) * z + T(-2.118377725)) * z + T(1);
    x = y * num / den;
  } else {
    const T z = math::sqrt(-math::log((T(1) - y_abs) / T(2)));
    const T num = ((T(1.641345311) * z + T(3.429567803)) * z + T(-1.624906493)) * z + T(-1.970840454);
    const T den = (T(1.637067800) * z + T(3.543889200)) * z + T(1);
    x = math::copysign(num, y) / den;
  }
  const T two_over_sqrt_pi = T(2) / T(1.7724538509055159);  // spelled as ATen's, for the same rounding
  x = x - (math::erf(x) - y) / (two_over_sqrt_pi * math::exp(-x * x));
  x = x - (math::erf(x) - y) / (two_over_sqrt_pi * math::exp(-x * x));
  return x;
}
}  // namespace gr::math

namespace gr::functors {

// ---- unary float math (integer inputs arrive converted to float32) ----
#define GR_FUNCTOR_CALL(Name, expr) \
  template <class T> struct Name { GR_HOST_DEVICE T operator()(T a) const { return expr; } };
GR_FUNCTOR_CALL(Sin, math::sin(a))
GR_FUNCTOR_CALL(Cos, math::cos(a))
GR_FUNCTOR_CALL(Tan, math::tan(a))
GR_FUNCTOR_CALL(Asin, math::asin(a))
GR_FUNCTOR_CALL(Acos, math::acos(a))
GR_FUNCTOR_CALL(Atan, math::atan(a))
GR_FUNCTOR_CALL(Sinh, math::sinh(a))
GR_FUNCTOR_CALL(Cosh, math::cosh(a))
GR_FUNCTOR_CALL(Erf, math::erf(a))
GR_FUNCTOR_CALL(Erfc, math::erfc(a))
GR_FUNCTOR_CALL(Erfinv, math::erfinv(a))
GR_FUNCTOR_CALL(Log1p, math::log1p(a))
GR_FUNCTOR_CALL(Expm1, math::expm1(a))
GR_FUNCTOR_CALL(Log2, math::log2(a))
GR_FUNCTOR_CALL(Log10, math::log10(a))
GR_FUNCTOR_CALL(Rsqrt, T(1) / math::sqrt(a))
GR_FUNCTOR_CALL(Reciprocal, T(1) / a)
GR_FUNCTOR_CALL(Frac, a - math::trunc(a))
#undef GR_FUNCTOR_CALL

// ---- unary, dtype kept (integers too) ----
template <class T> struct Square { GR_HOST_DEVICE T operator()(T a) const { return a * a; } };
// (0 < a) - (a < 0): NaN and -0.0 give +0, as torch.sign.
template <class T> struct Sign {
  GR_HOST_DEVICE T operator()(T a) const {
    if constexpr (std::is_same_v<T, bool>) return a;
    else if constexpr (std::is_unsigned_v<T>) return T(a > T(0));
    else return T(int(T(0) < a) - int(a < T(0)));
  }
};
// Rounding is the identity on integers.
#define GR_ROUNDING_FUNCTOR(Name, fn)                                     \
  template <class T> struct Name {                                        \
    GR_HOST_DEVICE T operator()(T a) const {                              \
      if constexpr (math::is_integral_v<T>) return a;                     \
      else return math::fn(a);                                            \
    }                                                                     \
  };
GR_ROUNDING_FUNCTOR(Floor, floor)
GR_ROUNDING_FUNCTOR(Ceil, ceil)
GR_ROUNDING_FUNCTOR(Trunc, trunc)
GR_ROUNDING_FUNCTOR(Round, nearbyint)
#undef GR_ROUNDING_FUNCTOR
// round(x, decimals) as ATen: x * 10^d rounded and scaled back (x / 10^-d for d < 0).
template <class T> struct RoundDecimals {
  T ten_pow;
  bool negative;
  GR_HOST_DEVICE T operator()(T a) const {
    return negative ? math::nearbyint(a / ten_pow) * ten_pow : math::nearbyint(a * ten_pow) / ten_pow;
  }
};
// log(1 + exp(beta x)) / beta, linear above the threshold.
template <class T> struct Softplus {
  T beta, threshold;
  GR_HOST_DEVICE T operator()(T a) const {
    const T z = a * beta;
    return z > threshold ? a : math::log1p(math::exp(z)) / beta;
  }
};

// ---- binary ----
template <class T> struct Atan2 { GR_HOST_DEVICE T operator()(T a, T b) const { return math::atan2(a, b); } };
template <class T> struct Hypot { GR_HOST_DEVICE T operator()(T a, T b) const { return math::hypot(a, b); } };
// log(e^a + e^b) as ATen's: max + log1p(e^-|a - b|), and a itself for equal infinities (whose
// difference is NaN).
template <class T> struct Logaddexp {
  GR_HOST_DEVICE T operator()(T a, T b) const {
    if (math::fabs(a) == T(INFINITY) && a == b) return a;
    const T m = math::max(a, b);
    return m + math::log1p(math::exp(-math::fabs(a - b)));
  }
};
// a log(b), 0 where a is 0 unless b is NaN, as ATen's.
template <class T> struct Xlogy {
  GR_HOST_DEVICE T operator()(T a, T b) const {
    if (math::isnan(b)) return T(NAN);
    if (a == T(0)) return T(0);
    return a * math::log(b);
  }
};
template <class T> struct Copysign { GR_HOST_DEVICE T operator()(T a, T b) const { return math::copysign(a, b); } };
// C's fmod: the result has the dividend's sign. Integer divisors are checked nonzero by the
// caller; x % -1 is 0 (spelled out: INT64_MIN % -1 traps on x86).
template <class T> struct Fmod {
  GR_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (!math::is_integral_v<T>) return math::fmod(a, b);
    else if constexpr (std::is_signed_v<T>) return b == T(-1) ? T(0) : T(a % b);
    else return T(a % b);
  }
};
// Python's modulo: the result has the divisor's sign.
template <class T> struct Remainder {
  GR_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (!math::is_integral_v<T>) {
      T mod = math::fmod(a, b);
      if (mod != T(0) && ((b < T(0)) != (mod < T(0)))) mod += b;
      return mod;
    } else if constexpr (std::is_signed_v<T>) {
      T r = b == T(-1) ? T(0) : T(a % b);
      if (r != T(0) && ((r < T(0)) != (b < T(0)))) r += b;
      return r;
    } else {
      return T(a % b);
    }
  }
};
// a + w (b - a), computed from the nearer end for accuracy (ATen's lerp).
template <class T>
GR_HOST_DEVICE GR_INLINE T lerp(T a, T b, T w) {
  return math::fabs(w) < T(0.5) ? a + w * (b - a) : b - (b - a) * (T(1) - w);
}
template <class T> struct LerpScalar {
  T weight;
  GR_HOST_DEVICE T operator()(T a, T b) const { return lerp(a, b, weight); }
};
template <class T> struct Lerp { GR_HOST_DEVICE T operator()(T a, T b, T w) const { return lerp(a, b, w); } };

// ---- clamp: NaN inputs stay NaN; with min > max every element becomes max ----
template <class T> struct ClampScalar {
  T lo, hi;
  GR_HOST_DEVICE T operator()(T a) const {
    const T r = a < lo ? lo : a;
    return hi < r ? hi : r;
  }
};
template <class T> struct ClampMinScalar {
  T lo;
  GR_HOST_DEVICE T operator()(T a) const { return a < lo ? lo : a; }
};
template <class T> struct ClampMaxScalar {
  T hi;
  GR_HOST_DEVICE T operator()(T a) const { return hi < a ? hi : a; }
};
// Tensor bounds: a NaN in any operand gives NaN.
template <class T> struct Clamp {
  GR_HOST_DEVICE T operator()(T a, T lo, T hi) const {
    if (math::isnan(lo)) return lo;
    if (math::isnan(hi)) return hi;
    const T r = a < lo ? lo : a;
    return hi < r ? hi : r;
  }
};

// ---- logical (any dtype in, bool out: nonzero and NaN are true) and bitwise ----
template <class T> struct LogicalAnd { GR_HOST_DEVICE bool operator()(T a, T b) const { return (a != T(0)) & (b != T(0)); } };
template <class T> struct LogicalOr { GR_HOST_DEVICE bool operator()(T a, T b) const { return (a != T(0)) | (b != T(0)); } };
template <class T> struct LogicalXor { GR_HOST_DEVICE bool operator()(T a, T b) const { return (a != T(0)) != (b != T(0)); } };
template <class T> struct LogicalNot { GR_HOST_DEVICE bool operator()(T a) const { return a == T(0); } };
template <class T> struct BitwiseAnd { GR_HOST_DEVICE T operator()(T a, T b) const { return T(a & b); } };
template <class T> struct BitwiseOr { GR_HOST_DEVICE T operator()(T a, T b) const { return T(a | b); } };
template <class T> struct BitwiseXor { GR_HOST_DEVICE T operator()(T a, T b) const { return T(a ^ b); } };
template <class T> struct BitwiseNot {
  GR_HOST_DEVICE T operator()(T a) const {
    if constexpr (std::is_same_v<T, bool>) return !a;
    else return T(~a);
  }
};

// ---- classification (bool out; integers are always finite) ----
template <class T> struct IsNan { GR_HOST_DEVICE bool operator()(T a) const { return math::isnan(a); } };
template <class T> struct IsInf {
  GR_HOST_DEVICE bool operator()(T a) const {
    if constexpr (math::is_integral_v<T>) return false;
    else return math::fabs(a) == T(INFINITY);
  }
};
template <class T> struct IsFinite {
  GR_HOST_DEVICE bool operator()(T a) const {
    if constexpr (math::is_integral_v<T>) return true;
    else return math::fabs(a) < T(INFINITY);
  }
};

// torch.isclose: equal, both NaN with equal_nan, or a finite |a - b| <= atol + |rtol * b|
// (integers measure the error in float32, torch's default dtype).
template <class T> struct IsClose {
  using F = std::conditional_t<math::is_integral_v<T>, float, T>;
  F rtol, atol;
  bool equal_nan;
  GR_HOST_DEVICE bool operator()(T a, T b) const {  // branch-free, so the CPU loop vectorises
    const F err = math::fabs(F(a) - F(b));
    const bool both_nan = equal_nan & math::isnan(a) & math::isnan(b);
    return (a == b) | both_nan | ((err < F(INFINITY)) & (err <= atol + math::fabs(rtol * F(b))));
  }
};

}  // namespace gr::functors
