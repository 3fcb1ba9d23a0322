// ScalarType (dtype), its C++ types, sizes, names, promotion, and the type-dispatch helpers.
#pragma once

#include <cstdint>
#include <ostream>
#include <string_view>

#include "core/error.h"
#include "core/half.h"

namespace gr {

// New dtypes are appended: the values are indices of tables (names, promotion).
enum class ScalarType : int8_t { Float32, Float64, Int64, UInt8, Bool, BFloat16, Float16, Int32, Int16, Int8 };
constexpr int kNumScalarTypes = 10;

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
constexpr ScalarType kInt32 = ScalarType::Int32;
constexpr ScalarType kInt = ScalarType::Int32;
constexpr ScalarType kInt16 = ScalarType::Int16;
constexpr ScalarType kShort = ScalarType::Int16;
constexpr ScalarType kInt8 = ScalarType::Int8;
constexpr ScalarType kChar = ScalarType::Int8;

size_t element_size(ScalarType t);
std::string_view dtype_name(ScalarType t);  // "float32", "int64", ...
std::ostream& operator<<(std::ostream& out, ScalarType t);

inline bool is_floating_point(ScalarType t) {
  return t == kFloat32 || t == kFloat64 || t == kBFloat16 || t == kFloat16;
}
// Note [Reduced float math]
// bfloat16 and float16 are storage types, as in PyTorch's CPU kernels: an op on them computes
// on float32 values (or converts its inputs to float32 copies) and rounds its result back to
// the reduced type once, at the end of the op. So a chain of ops rounds after every op, as
// torch's does, and a reduction (sum, mean, var, softmax, mm) accumulates in float32 or wider.
// The native ops do the conversions (math_dtype in core/native/elementwise/elementwise_run.h, the first lines of
// native::sum, var, max/min, mm, bmm and softmax); kernels see float32 and float64 only.
inline bool is_reduced_float(ScalarType t) { return t == kBFloat16 || t == kFloat16; }
// As c10::isIntegralType: the integer dtypes, and bool when include_bool.
inline bool is_integral(ScalarType t, bool include_bool) {
  return t == kInt64 || t == kInt32 || t == kInt16 || t == kInt8 || t == kUInt8 || (include_bool && t == kBool);
}

// The dtype two operands compute in, torch.promote_types's table: float beats int, wider
// beats narrower, uint8 with a signed type gives the next signed type holding both (int8 ->
// int16), float16 with bfloat16 gives float32.
ScalarType promote_types(ScalarType a, ScalarType b);
// Whether an op computing in `from` may write its result into a tensor of dtype `to`
// (torch.can_cast): not floating into integral, not non-bool into bool.
bool can_cast(ScalarType from, ScalarType to);

template <class T> struct CppTypeToScalarType;
template <> struct CppTypeToScalarType<float> { static constexpr ScalarType value = kFloat32; };
template <> struct CppTypeToScalarType<double> { static constexpr ScalarType value = kFloat64; };
template <> struct CppTypeToScalarType<int64_t> { static constexpr ScalarType value = kInt64; };
template <> struct CppTypeToScalarType<uint8_t> { static constexpr ScalarType value = kUInt8; };
template <> struct CppTypeToScalarType<bool> { static constexpr ScalarType value = kBool; };
template <> struct CppTypeToScalarType<BFloat16> { static constexpr ScalarType value = kBFloat16; };
template <> struct CppTypeToScalarType<Half> { static constexpr ScalarType value = kFloat16; };
template <> struct CppTypeToScalarType<int32_t> { static constexpr ScalarType value = kInt32; };
template <> struct CppTypeToScalarType<int16_t> { static constexpr ScalarType value = kInt16; };
template <> struct CppTypeToScalarType<int8_t> { static constexpr ScalarType value = kInt8; };
template <class T> constexpr ScalarType scalar_type_of = CppTypeToScalarType<T>::value;

// Accumulation type for reductions: float sums accumulate in double on the CPU.
template <class T> struct AccType { using type = T; };
template <> struct AccType<float> { using type = double; };
template <> struct AccType<BFloat16> { using type = double; };
template <> struct AccType<Half> { using type = double; };
template <> struct AccType<uint8_t> { using type = int64_t; };
template <> struct AccType<bool> { using type = int64_t; };
template <> struct AccType<int32_t> { using type = int64_t; };
template <> struct AccType<int16_t> { using type = int64_t; };
template <> struct AccType<int8_t> { using type = int64_t; };
template <class T> using acc_t = typename AccType<T>::type;

// Calls fn.template operator()<T>() with T the C++ type of `t`. The *_FLOATING form
// accepts float32/float64, *_ARITH adds the integer types (int64, int32, int16, int8, uint8),
// *_ALL every dtype, *_INDEX the dtypes of index tensors (int64, int32). bfloat16/float16
// are not arithmetic types here: their math runs in float32 (Note [Reduced float math]).
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
    case kInt32: return fn.template operator()<int32_t>();
    case kInt16: return fn.template operator()<int16_t>();
    case kInt8: return fn.template operator()<int8_t>();
    case kUInt8: return fn.template operator()<uint8_t>();
    default:
      GR_ERROR(op, ": dtype ", dtype_name(t),
               " is not supported (float32, float64, int64, int32, int16, int8 and uint8 are)");
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
    case kInt32: return fn.template operator()<int32_t>();
    case kInt16: return fn.template operator()<int16_t>();
    case kInt8: return fn.template operator()<int8_t>();
  }
  GR_ERROR(op, ": unknown dtype");
}
template <class F>
decltype(auto) dispatch_index(ScalarType t, const char* op, F&& fn) {
  switch (t) {
    case kInt64: return fn.template operator()<int64_t>();
    case kInt32: return fn.template operator()<int32_t>();
    default: GR_ERROR(op, ": expected an int64 or int32 index tensor, got ", dtype_name(t));
  }
}

}  // namespace gr
