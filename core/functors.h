// Element-wise math written once: GR_HOST_DEVICE functors that the CPU loops and the CUDA
// kernels both call, so CPU tests check the arithmetic the GPU runs. T is the compute type.
#pragma once

#include <math.h>

#include <cstdint>
#include <type_traits>

#include "core/convert.h"
#include "core/half.h"
#include "core/macros.h"

namespace gr::math {
// Overloads that resolve to the C library on the host and to CUDA's math on the device.
GR_HOST_DEVICE GR_INLINE float exp(float x) { return ::expf(x); }
GR_HOST_DEVICE GR_INLINE double exp(double x) { return ::exp(x); }
GR_HOST_DEVICE GR_INLINE float log(float x) { return ::logf(x); }
GR_HOST_DEVICE GR_INLINE double log(double x) { return ::log(x); }
GR_HOST_DEVICE GR_INLINE float sqrt(float x) { return ::sqrtf(x); }
GR_HOST_DEVICE GR_INLINE double sqrt(double x) { return ::sqrt(x); }
GR_HOST_DEVICE GR_INLINE float tanh(float x) { return ::tanhf(x); }
GR_HOST_DEVICE GR_INLINE double tanh(double x) { return ::tanh(x); }
GR_HOST_DEVICE GR_INLINE float pow(float x, float y) { return ::powf(x, y); }
GR_HOST_DEVICE GR_INLINE double pow(double x, double y) { return ::pow(x, y); }
GR_HOST_DEVICE GR_INLINE float cos(float x) { return ::cosf(x); }
GR_HOST_DEVICE GR_INLINE double cos(double x) { return ::cos(x); }
GR_HOST_DEVICE GR_INLINE float sin(float x) { return ::sinf(x); }
GR_HOST_DEVICE GR_INLINE double sin(double x) { return ::sin(x); }
// A fused multiply-add, written out where CPU and CUDA must round identically: nvcc and GCC
// both contract a * b + c on their own, each where it likes, unless it is spelled out.
GR_HOST_DEVICE GR_INLINE float fma(float a, float b, float c) { return ::fmaf(a, b, c); }
GR_HOST_DEVICE GR_INLINE double fma(double a, double b, double c) { return ::fma(a, b, c); }
GR_HOST_DEVICE GR_INLINE float fabs(float x) { return ::fabsf(x); }
GR_HOST_DEVICE GR_INLINE double fabs(double x) { return ::fabs(x); }
GR_HOST_DEVICE GR_INLINE bool isnan(float x) { return x != x; }
GR_HOST_DEVICE GR_INLINE bool isnan(double x) { return x != x; }
template <class T>
GR_HOST_DEVICE GR_INLINE bool isnan(T) { return false; }  // integers
template <class T>
GR_HOST_DEVICE GR_INLINE T abs(T x) {
  if constexpr (sizeof(T) == 1 && T(-1) > T(0)) return x;  // unsigned
  else return x < T(0) ? T(-x) : x;
}
template <class T>
GR_HOST_DEVICE GR_INLINE T min(T a, T b) { return b < a ? b : a; }
template <class T>
GR_HOST_DEVICE GR_INLINE T max(T a, T b) { return a < b ? b : a; }
// Integer power by squaring (exponent >= 0).
template <class T>
GR_HOST_DEVICE GR_INLINE T ipow(T base, int64_t e) {
  T r = 1;
  while (e > 0) {
    if (e & 1) r *= base;
    base *= base;
    e >>= 1;
  }
  return r;
}
}  // namespace gr::math

namespace gr::functors {

// ---- binary arithmetic ----
template <class T> struct Add { T alpha; GR_HOST_DEVICE T operator()(T a, T b) const { return a + alpha * b; } };
template <class T> struct Sub { T alpha; GR_HOST_DEVICE T operator()(T a, T b) const { return a - alpha * b; } };
template <class T> struct Mul { GR_HOST_DEVICE T operator()(T a, T b) const { return a * b; } };
template <class T> struct Div { GR_HOST_DEVICE T operator()(T a, T b) const { return a / b; } };
template <class T> struct Pow {
  GR_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (T(1) / T(2) == T(0)) return math::ipow(a, static_cast<int64_t>(b));
    else return math::pow(a, b);
  }
};
template <class T> struct Maximum {
  GR_HOST_DEVICE T operator()(T a, T b) const { return (math::isnan(a) || a > b) ? a : b; }
};
template <class T> struct Minimum {
  GR_HOST_DEVICE T operator()(T a, T b) const { return (math::isnan(a) || a < b) ? a : b; }
};

// ---- comparisons (bool results) ----
template <class T> struct Eq { GR_HOST_DEVICE bool operator()(T a, T b) const { return a == b; } };
template <class T> struct Ne { GR_HOST_DEVICE bool operator()(T a, T b) const { return a != b; } };
template <class T> struct Gt { GR_HOST_DEVICE bool operator()(T a, T b) const { return a > b; } };
template <class T> struct Lt { GR_HOST_DEVICE bool operator()(T a, T b) const { return a < b; } };
template <class T> struct Ge { GR_HOST_DEVICE bool operator()(T a, T b) const { return a >= b; } };
template <class T> struct Le { GR_HOST_DEVICE bool operator()(T a, T b) const { return a <= b; } };

template <class T> struct Where { GR_HOST_DEVICE T operator()(bool c, T a, T b) const { return c ? a : b; } };

// ---- unary ----
template <class T> struct Neg { GR_HOST_DEVICE T operator()(T a) const { return -a; } };
template <class T> struct Exp { GR_HOST_DEVICE T operator()(T a) const { return math::exp(a); } };
template <class T> struct Log { GR_HOST_DEVICE T operator()(T a) const { return math::log(a); } };
template <class T> struct Sqrt { GR_HOST_DEVICE T operator()(T a) const { return math::sqrt(a); } };
template <class T> struct Abs { GR_HOST_DEVICE T operator()(T a) const { return math::abs(a); } };
template <class T> struct Relu { GR_HOST_DEVICE T operator()(T a) const { return a > T(0) ? a : T(0); } };
template <class T> struct Sigmoid { GR_HOST_DEVICE T operator()(T a) const { return T(1) / (T(1) + math::exp(-a)); } };
template <class T> struct Tanh { GR_HOST_DEVICE T operator()(T a) const { return math::tanh(a); } };
template <class T> struct PowScalar {
  T exponent;
  GR_HOST_DEVICE T operator()(T a) const {
    if (exponent == T(2)) return a * a;
    if (exponent == T(1)) return a;
    return math::pow(a, exponent);
  }
};
// max/min with its index over a run: does (v, i) beat the best so far (best, best_i)? NaN
// beats numbers, then the larger (smaller) value, then the lower index. The order is total,
// so any split of the run combined in any order picks what one forward scan picks: the
// first NaN, else the first extreme.
template <class T>
struct ArgExtreme {
  bool is_max;
  GR_HOST_DEVICE bool operator()(T v, int64_t i, T best, int64_t best_i) const {
    const bool v_nan = math::isnan(v), best_nan = math::isnan(best);
    if (v_nan || best_nan) return v_nan && (!best_nan || i < best_i);
    if (v == best) return i < best_i;
    return is_max ? v > best : v < best;
  }
};

template <class T> struct Fill { T value; GR_HOST_DEVICE T operator()() const { return value; } };

// dtype conversion (core/convert.h).
template <class O, class I>
struct Convert {
  GR_HOST_DEVICE O operator()(I v) const { return convert<O>(v); }
};

// ---- backward formulas (grad first) ----
template <class T> struct ReluBackward {  // uses the output: y > 0 exactly where x > 0
  GR_HOST_DEVICE T operator()(T grad, T y) const { return y > T(0) ? grad : T(0); }
};
template <class T> struct SigmoidBackward {
  GR_HOST_DEVICE T operator()(T grad, T y) const { return grad * y * (T(1) - y); }
};
template <class T> struct TanhBackward {
  GR_HOST_DEVICE T operator()(T grad, T y) const { return grad * (T(1) - y * y); }
};
template <class T> struct PowScalarBackward {  // d/dx x^e = e * x^(e-1)
  T exponent;
  GR_HOST_DEVICE T operator()(T grad, T x) const {
    if (exponent == T(0)) return T(0);
    if (exponent == T(2)) return grad * T(2) * x;
    return grad * exponent * math::pow(x, exponent - T(1));
  }
};
template <class T> struct AbsBackward {
  GR_HOST_DEVICE T operator()(T grad, T x) const { return x > T(0) ? grad : (x < T(0) ? -grad : T(0)); }
};

}  // namespace gr::functors
