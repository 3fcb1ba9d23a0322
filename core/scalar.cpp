// Scalar's overflow check (c10's checked_convert rule).
#include "core/scalar.h"

#include <cmath>
#include <limits>

namespace gr {

namespace {
// [lowest, max] of a dtype's finite values, as doubles.
std::pair<double, double> finite_range(ScalarType t) {
  auto range = [](auto v) {
    using T = decltype(v);
    return std::pair<double, double>(static_cast<double>(std::numeric_limits<T>::lowest()),
                                     static_cast<double>(std::numeric_limits<T>::max()));
  };
  switch (t) {
    case kFloat32: return range(float{});
    case kFloat64: return range(double{});
    case kInt64: return range(int64_t{});
    case kInt32: return range(int32_t{});
    case kInt16: return range(int16_t{});
    case kInt8: return range(int8_t{});
    case kUInt8: return range(uint8_t{});
    case kBool: return {0.0, 1.0};
    case kBFloat16: return {-3.3895313892515355e38, 3.3895313892515355e38};
    case kFloat16: return {-65504.0, 65504.0};
  }
  return {0.0, 0.0};
}
}  // namespace

bool Scalar::overflows(ScalarType t) const {
  if (kind_ == Kind::Bool || t == kBool) return false;
  const auto [lowest, max] = finite_range(t);
  if (kind_ == Kind::Double) {
    if (std::isnan(d_)) return !gr::is_floating_point(t);
    if (std::isinf(d_) && gr::is_floating_point(t)) return false;
    return d_ < lowest || d_ > max;
  }
  if (t == kUInt8 && i_ < 0) return i_ < -255;  // negative values wrap, as c10 allows (a - b as a + 255 * b)
  return static_cast<double>(i_) < lowest || static_cast<double>(i_) > max;
}

void Scalar::check_fits(ScalarType t, const char* op) const {
  if (!overflows(t)) return;
  if (kind_ == Kind::Double) GR_ERROR(op, ": value ", d_, " cannot be converted to type ", t, " without overflow");
  GR_ERROR(op, ": value ", i_, " cannot be converted to type ", t, " without overflow");
}

}  // namespace gr
