// ScalarType (dtype), its C++ types, sizes, names, promotion, and the type-dispatch helpers.
#pragma once

#include <cstdint>
#include <ostream>
#include <string_view>

#include "core/error.h"
#include "core/half.h"

namespace gr {

enum class ScalarType : int8_t { Float32, Float64, Int64, UInt8, Bool, BFloat16, Float16 };

constexpr ScalarType kFloat32 = ScalarType::Float32;
constexpr ScalarType kFloat = ScalarType::Float32;
constexpr ScalarType kFloat64 = ScalarType::Float64;
constexpr ScalarType kDouble = ScalarType::Float64;
constexpr ScalarType kInt64 = ScalarType::Int64;
constexpr ScalarType kLong = ScalarType::Int64;
constexpr ScalarType kUInt8 = ScalarType::UInt8;
constexpr ScalarType kByte = ScalarType::UInt8;
constexpr ScalarType kBool = ScalarType::Bool;
constexpr ScalarType kBFloat16 = ScalarType::BFloat16;
constexpr ScalarType kFloat16 = ScalarType::Float16;
constexpr ScalarType kHalf = ScalarType::Float16;

size_t element_size(ScalarType t);
std::string_view dtype_name(ScalarType t);  // "float32", "int64", ...
std::ostream& operator<<(std::ostream& out, ScalarType t);

inline bool is_floating_point(ScalarType t) {
  return t == kFloat32 || t == kFloat64 || t == kBFloat16 || t == kFloat16;
}
// Reduced-precision floats are storage types: math on them runs in float32.
inline bool is_reduced_float(ScalarType t) { return t == kBFloat16 || t == kFloat16; }

// The dtype two operands compute in (float beats int, wider beats narrower).
ScalarType promote_types(ScalarType a, ScalarType b);

template <class T> struct CppTypeToScalarType;
template <> struct CppTypeToScalarType<float> { static constexpr ScalarType value = kFloat32; };
template <> struct CppTypeToScalarType<double> { static constexpr ScalarType value = kFloat64; };
template <> struct CppTypeToScalarType<int64_t> { static constexpr ScalarType value = kInt64; };
template <> struct CppTypeToScalarType<uint8_t> { static constexpr ScalarType value = kUInt8; };
template <> struct CppTypeToScalarType<bool> { static constexpr ScalarType value = kBool; };
template <> struct CppTypeToScalarType<BFloat16> { static constexpr ScalarType value = kBFloat16; };
template <> struct CppTypeToScalarType<Half> { static constexpr ScalarType value = kFloat16; };
template <class T> constexpr ScalarType scalar_type_of = CppTypeToScalarType<T>::value;

// Accumulation type for reductions: float sums accumulate in double on the CPU.
template <class T> struct AccType { using type = T; };
template <> struct AccType<float> { using type = double; };
template <> struct AccType<BFloat16> { using type = double; };
template <> struct AccType<Half> { using type = double; };
template <> struct AccType<uint8_t> { using type = int64_t; };
template <> struct AccType<bool> { using type = int64_t; };
template <class T> using acc_t = typename AccType<T>::type;

// Calls fn.template operator()<T>() with T the C++ type of `t`. The *_FLOATING form
// accepts float32/float64, *_ARITH adds int64 and uint8, *_ALL every dtype.
template <class F>
decltype(auto) dispatch_floating(ScalarType t, const char* op, F&& fn) {
  switch (t) {
    case kFloat32: return fn.template operator()<float>();
    case kFloat64: return fn.template operator()<double>();
    default: GR_ERROR(op, ": expected a float32 or float64 tensor, got ", dtype_name(t));
  }
}
template <class F>
decltype(auto) dispatch_arith(ScalarType t, const char* op, F&& fn) {
  switch (t) {
    case kFloat32: return fn.template operator()<float>();
    case kFloat64: return fn.template operator()<double>();
    case kInt64: return fn.template operator()<int64_t>();
    case kUInt8: return fn.template operator()<uint8_t>();
    default: GR_ERROR(op, ": dtype ", dtype_name(t), " is not supported (float32, float64, int64, uint8 are)");
  }
}
template <class F>
decltype(auto) dispatch_all(ScalarType t, const char* op, F&& fn) {
  switch (t) {
    case kFloat32: return fn.template operator()<float>();
    case kFloat64: return fn.template operator()<double>();
    case kInt64: return fn.template operator()<int64_t>();
    case kUInt8: return fn.template operator()<uint8_t>();
    case kBool: return fn.template operator()<bool>();
    case kBFloat16: return fn.template operator()<BFloat16>();
    case kFloat16: return fn.template operator()<Half>();
  }
  GR_ERROR(op, ": unknown dtype");
}

}  // namespace gr
