// Value conversion between dtypes, written once for the CPU and CUDA: convert<To>(v) is what
// copy_, to() and Scalar::to<T>() compute. See Note [Float to integer conversion].
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/half.h"
#include "core/macros.h"

namespace gr {

template <class T>
inline constexpr bool is_reduced_float_v = std::is_same_v<T, BFloat16> || std::is_same_v<T, Half>;

namespace detail {
// Note [Float to integer conversion]
// C++ leaves a float outside the target's range (and NaN) undefined, CUDA saturates, and
// torch's CPU kernels give what x86's truncating conversion gives. gradring computes x86's
// answer explicitly on every host and device, so torch's CPU values are reproduced (tested
// against torch in test_dtypes.cpp): to int64, NaN and values outside [-2^63, 2^63) give
// INT64_MIN; to the narrower integers the value goes through int32 (NaN and values outside
// int32 give INT32_MIN) and keeps the low bits (300.0 -> int8 44, -1.5 -> uint8 255).
// Within range, the fraction is truncated toward zero. torch's CUDA results for such values
// differ (saturation), and are implementation-defined there too.
template <class To>
GR_HOST_DEVICE GR_INLINE To float_to_int(double v) {
  if constexpr (sizeof(To) == 8) {
    return (v >= -9223372036854775808.0 && v < 9223372036854775808.0) ? static_cast<To>(v) : INT64_MIN;
  } else {
    const int32_t w = (v > -2147483649.0 && v < 2147483648.0) ? static_cast<int32_t>(v) : INT32_MIN;
    return static_cast<To>(w);  // modular (C++20)
  }
}
}  // namespace detail

// v as a To: bool means != 0; bfloat16/float16 go through float32 (as c10's do); floats to
// integers per Note [Float to integer conversion]; integers to narrower integers wrap.
template <class To, class From>
GR_HOST_DEVICE GR_INLINE To convert(From v) {
  if constexpr (std::is_same_v<To, From>) return v;
  else if constexpr (is_reduced_float_v<From>) return convert<To>(static_cast<float>(v));
  else if constexpr (std::is_same_v<To, bool>) return v != From(0);
  else if constexpr (is_reduced_float_v<To>) return To(static_cast<float>(v));
  else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To> && !std::is_same_v<To, bool>)
    return detail::float_to_int<To>(static_cast<double>(v));
  else return static_cast<To>(v);
}

}  // namespace gr
