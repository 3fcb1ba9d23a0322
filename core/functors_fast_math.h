// Branch-free float exp and erf that compilers vectorise (the C library's are scalar calls),
// for the hot element-wise kernels: gelu and its backward, and the CPU attention's weights.
#pragma once

#include <stdint.h>
#include <string.h>

#include "core/functors_math.h"

namespace gr::math {

// Note [Vectorisable exp and erf]
// expf and erff from the C library are calls GCC cannot vectorise: gelu spent 5.5 ns per
// float forward and 9.6 ns backward on them, a fifth of a GPT step (docs/benchmarks.md).
// These two are straight-line arithmetic (clamps are selects, rounding uses the 1.5 * 2^23
// trick, so no floor is needed), so a contiguous loop over them becomes AVX2 code (compile
// the loop's file with -fno-trapping-math, else GCC keeps the float compares scalar).
// Accuracy, measured against mpmath over [-3.92, 3.92] and [-87, 88]:
//   fast_exp: Cephes' expf polynomial (degree 6) after reducing by ln 2: at most 2 ulp; 0 below -87.3
//             (flushes what would be denormal), +inf saturates at 88.3.
//   fast_erf: x P(x^2) / Q(x^2), degrees 5 and 5, fitted by least squares on relative error
//             (fit in float64: 2.5e-8 relative); at most 8 ulp once evaluated in float (7.1
//             measured with FMA contraction), 4e-7 absolute near +-1; exactly +-1 from |x| =
//             3.92, where erf rounds to +-1 or is within half an ulp of it.
// They run on the GPU too (same functors), so the CPU tests check the device's arithmetic.
// double keeps the C library: float64 is what gradchecks use and must stay exact.

GR_HOST_DEVICE GR_INLINE float float_from_bits(int32_t bits) {
#ifdef __CUDA_ARCH__
  return __int_as_float(bits);
#else
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
#endif
}

GR_HOST_DEVICE GR_INLINE float fast_exp(float x) {
  const bool underflow = x < -87.3f;
  x = x < -87.3f ? -87.3f : x;
  x = x > 88.3f ? 88.3f : x;
  const float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;  // round(x / ln 2)
  float r = x - n * 0.693359375f;  // ln 2 in two parts: the first is exact in 9 bits
  r = r + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float y = p * r * r + r + 1.0f;
  return underflow ? 0.0f : y * float_from_bits((static_cast<int32_t>(n) + 127) << 23);
}
GR_HOST_DEVICE GR_INLINE double fast_exp(double x) { return exp(x); }

GR_HOST_DEVICE GR_INLINE float fast_erf(float x) {
  x = x < -4.0f ? -4.0f : x;
  x = x > 4.0f ? 4.0f : x;
  const float t = x * x;
  float p = 1.98685273e-6f;
  p = p * t + 2.84565443e-4f;
  p = p * t + 3.88318395e-3f;
  p = p * t + 5.31012488e-2f;
  p = p * t + 1.93540900e-1f;
  p = p * t + 1.12837914e+0f;
  float q = 3.74208869e-5f;
  q = q * t + 1.18553851e-3f;
  q = q * t + 1.52069231e-2f;
  q = q * t + 1.15348329e-1f;
  q = q * t + 5.04853713e-1f;
  q = q * t + 1.0f;
  const float y = x * p / q;
  return x >= 3.92f ? 1.0f : (x <= -3.92f ? -1.0f : y);  // erf rounds to +-1 out there
}
GR_HOST_DEVICE GR_INLINE double fast_erf(double x) { return erf(x); }

}  // namespace gr::math
