// Scalar: a number passed to ops (int64, double or bool), converted to the tensor's dtype;
// libtorch's accessors (toDouble, toLong, isFloatingPoint, ...) beside gradring's own.
#pragma once

#include <concepts>
#include <cstdint>

#include "core/convert.h"
#include "core/dtype.h"

namespace gr {

class Scalar {
 public:
  Scalar() : Scalar(int64_t{0}) {}
  Scalar(bool v) : kind_(Kind::Bool), i_(v) {}
  template <std::integral T>
    requires(!std::same_as<T, bool>)
  Scalar(T v) : kind_(Kind::Int), i_(static_cast<int64_t>(v)) {}
  template <std::floating_point T>
  Scalar(T v) : kind_(Kind::Double), d_(static_cast<double>(v)) {}
  Scalar(BFloat16 v) : Scalar(static_cast<double>(static_cast<float>(v))) {}
  Scalar(Half v) : Scalar(static_cast<double>(static_cast<float>(v))) {}

  bool is_floating_point() const { return kind_ == Kind::Double; }
  bool is_integral() const { return kind_ != Kind::Double; }
  bool is_boolean() const { return kind_ == Kind::Bool; }
  double to_double() const { return kind_ == Kind::Double ? d_ : static_cast<double>(i_); }
  int64_t to_int64() const { return to<int64_t>(); }
  // The value as T, as a kernel converts it (core/convert.h): doubles to integers per Note
  // [Float to integer conversion], integers wrap, no checks. checked<T>() and libtorch's
  // toLong() etc. below check, as fill_ and full do.
  template <class T>
  T to() const {
    if (kind_ == Kind::Double) return convert<T>(d_);
    if (kind_ == Kind::Bool) return convert<T>(i_ != 0);
    return convert<T>(i_);
  }
  // The dtype of the value: kDouble, kLong or kBool (as c10::Scalar::type()).
  ScalarType type() const { return kind_ == Kind::Double ? kDouble : kind_ == Kind::Bool ? kBool : kLong; }
  // Whether the value does not fit `t`, by c10's rule (checked_convert): floats outside the
  // finite range of t (NaN and inf are fine for floating t), integers outside t's range
  // (negative values down to -255 are fine for uint8: they wrap), never for bool.
  bool overflows(ScalarType t) const;
  // Throws "<op>: value <v> cannot be converted to type <t> without overflow" if it overflows.
  void check_fits(ScalarType t, const char* op) const;

  // ---- libtorch's spellings: checked, as c10's (throw where the value overflows) ----
  double toDouble() const { return checked<double>(); }
  float toFloat() const { return checked<float>(); }
  int64_t toLong() const { return checked<int64_t>(); }
  int32_t toInt() const { return checked<int32_t>(); }
  int16_t toShort() const { return checked<int16_t>(); }
  int8_t toChar() const { return checked<int8_t>(); }
  uint8_t toByte() const { return checked<uint8_t>(); }
  bool toBool() const { return checked<bool>(); }
  BFloat16 toBFloat16() const { return checked<BFloat16>(); }
  Half toHalf() const { return checked<Half>(); }
  template <class T>
  T checked() const {
    check_fits(scalar_type_of<T>, "Scalar");
    return to<T>();
  }
  bool isFloatingPoint() const { return is_floating_point(); }
  // As c10: integers, and bools when include_bool.
  bool isIntegral(bool include_bool) const { return kind_ == Kind::Int || (include_bool && kind_ == Kind::Bool); }
  bool isBoolean() const { return is_boolean(); }
  Scalar operator-() const {
    GR_CHECK(kind_ != Kind::Bool, "Scalar: negation of a bool is not supported");
    return kind_ == Kind::Double ? Scalar(-d_) : Scalar(-i_);
  }

 private:
  enum class Kind { Int, Double, Bool } kind_;
  union {
    int64_t i_;
    double d_;
  };
};

}  // namespace gr
