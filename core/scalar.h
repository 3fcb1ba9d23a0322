// Scalar: a number passed to ops (int64, double or bool), converted to the tensor's dtype.
#pragma once

#include <concepts>
#include <cstdint>

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

  bool is_floating_point() const { return kind_ == Kind::Double; }
  bool is_integral() const { return kind_ != Kind::Double; }
  double to_double() const { return kind_ == Kind::Double ? d_ : static_cast<double>(i_); }
  int64_t to_int64() const { return kind_ == Kind::Double ? static_cast<int64_t>(d_) : i_; }
  template <class T>
  T to() const {
    if constexpr (std::is_floating_point_v<T>) return static_cast<T>(to_double());
    else if constexpr (std::is_integral_v<T>) return static_cast<T>(kind_ == Kind::Double ? static_cast<int64_t>(d_) : i_);
    else return T(static_cast<float>(to_double()));  // BFloat16, Half
  }

 private:
  enum class Kind { Int, Double, Bool } kind_;
  union {
    int64_t i_;
    double d_;
  };
};

}  // namespace gr
