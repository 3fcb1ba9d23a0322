// BFloat16 and Half storage types with round-to-nearest-even conversion (host and device).
#pragma once

#include <cstdint>
#include <cstring>

#include "core/macros.h"

namespace gr {

namespace detail {
GR_HOST_DEVICE GR_INLINE uint32_t float_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
#endif
}
GR_HOST_DEVICE GR_INLINE float bits_float(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
#endif
}
}  // namespace detail

// bfloat16: the top 16 bits of an IEEE float32.
struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  GR_HOST_DEVICE BFloat16(float f) {
    uint32_t u = detail::float_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) {
      bits = 0x7fc0;  // NaN stays a (quiet) NaN
    } else {
      u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest, ties to even
      bits = static_cast<uint16_t>(u >> 16);
    }
  }
  GR_HOST_DEVICE operator float() const { return detail::bits_float(static_cast<uint32_t>(bits) << 16); }
};

// IEEE binary16.
struct Half {
  uint16_t bits = 0;
  Half() = default;
  GR_HOST_DEVICE Half(float f) {
    uint32_t u = detail::float_bits(f);
    uint32_t sign = (u >> 16) & 0x8000u;
    uint32_t abs = u & 0x7fffffffu;
    if (abs >= 0x7f800000u) {  // inf or NaN
      bits = static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
    } else if (abs >= 0x477ff000u) {  // rounds to >= 65520: overflow to inf
      bits = static_cast<uint16_t>(sign | 0x7c00u);
    } else if (abs < 0x38800000u) {  // below the smallest normal half: subnormal or zero
      // Adding 0.5f aligns the mantissa so the float adder does the rounding.
      float shifted = detail::bits_float(abs) + 0.5f;
      bits = static_cast<uint16_t>(sign | (detail::float_bits(shifted) - 0x3f000000u));
    } else {
      uint32_t mant_odd = (abs >> 13) & 1u;
      abs += 0xc8000fffu + mant_odd;  // rebias exponent (-112 << 23) and round to nearest even
      bits = static_cast<uint16_t>(sign | (abs >> 13));
    }
  }
  GR_HOST_DEVICE operator float() const {
    uint32_t sign = (static_cast<uint32_t>(bits) & 0x8000u) << 16;
    uint32_t exp = (bits >> 10) & 0x1fu;
    uint32_t mant = bits & 0x3ffu;
    if (exp == 0x1fu) return detail::bits_float(sign | 0x7f800000u | (mant << 13));
    if (exp == 0) {  // zero or subnormal: mant * 2^-24
      float f = static_cast<float>(mant) * 5.9604644775390625e-8f;
      return sign ? -f : f;
    }
    return detail::bits_float(sign | ((exp + 112u) << 23) | (mant << 13));
  }
};

}  // namespace gr
