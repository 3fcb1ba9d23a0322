// dtype sizes, names and type promotion.
#include "core/dtype.h"

namespace gr {

size_t element_size(ScalarType t) {
  switch (t) {
    case kFloat32: return 4;
    case kFloat64: return 8;
    case kInt64: return 8;
    case kUInt8: return 1;
    case kBool: return 1;
    case kBFloat16: return 2;
    case kFloat16: return 2;
    case kInt32: return 4;
    case kInt16: return 2;
    case kInt8: return 1;
  }
  return 0;
}

std::string_view dtype_name(ScalarType t) {
  switch (t) {
    case kFloat32: return "float32";
    case kFloat64: return "float64";
    case kInt64: return "int64";
    case kUInt8: return "uint8";
    case kBool: return "bool";
    case kBFloat16: return "bfloat16";
    case kFloat16: return "float16";
    case kInt32: return "int32";
    case kInt16: return "int16";
    case kInt8: return "int8";
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& out, ScalarType t) { return out << dtype_name(t); }

ScalarType promote_types(ScalarType a, ScalarType b) {
  // torch.promote_types, in the order of the enum (tests/data/make_coreapi_reference.py
  // writes torch's table and test_dtypes.cpp compares every pair).
  constexpr ScalarType f4 = kFloat32, f8 = kFloat64, i8 = kInt64, u1 = kUInt8, b1 = kBool, bf = kBFloat16,
                       f2 = kFloat16, i4 = kInt32, i2 = kInt16, i1 = kInt8;
  static constexpr ScalarType table[kNumScalarTypes][kNumScalarTypes] = {
      /* f4 */ {f4, f8, f4, f4, f4, f4, f4, f4, f4, f4},
      /* f8 */ {f8, f8, f8, f8, f8, f8, f8, f8, f8, f8},
      /* i8 */ {f4, f8, i8, i8, i8, bf, f2, i8, i8, i8},
      /* u1 */ {f4, f8, i8, u1, u1, bf, f2, i4, i2, i2},
      /* b1 */ {f4, f8, i8, u1, b1, bf, f2, i4, i2, i1},
      /* bf */ {f4, f8, bf, bf, bf, bf, f4, bf, bf, bf},
      /* f2 */ {f4, f8, f2, f2, f2, f4, f2, f2, f2, f2},
      /* i4 */ {f4, f8, i8, i4, i4, bf, f2, i4, i4, i4},
      /* i2 */ {f4, f8, i8, i2, i2, bf, f2, i4, i2, i2},
      /* i1 */ {f4, f8, i8, i2, i1, bf, f2, i4, i2, i1},
  };
  return table[static_cast<int>(a)][static_cast<int>(b)];
}

bool can_cast(ScalarType from, ScalarType to) {
  if (is_floating_point(from) && is_integral(to, /*include_bool=*/true)) return false;
  if (from != kBool && to == kBool) return false;
  return true;
}

}  // namespace gr
