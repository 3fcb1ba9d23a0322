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
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& out, ScalarType t) { return out << dtype_name(t); }

ScalarType promote_types(ScalarType a, ScalarType b) {
  if (a == b) return a;
  // Rank: bool < uint8 < int64 < float16/bfloat16 < float32 < float64.
  auto rank = [](ScalarType t) {
    switch (t) {
      case kBool: return 0;
      case kUInt8: return 1;
      case kInt64: return 2;
      case kFloat16: return 3;
      case kBFloat16: return 3;
      case kFloat32: return 4;
      case kFloat64: return 5;
    }
    return 0;
  };
  // float16 with bfloat16 has no lossless common type narrower than float32 (as in torch).
  if (rank(a) == 3 && rank(b) == 3) return kFloat32;
  return rank(a) >= rank(b) ? a : b;
}

}  // namespace gr
