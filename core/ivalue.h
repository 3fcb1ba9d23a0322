// IValue: a value of one of a few types (none, double, int64, bool, string, Tensor), as
// libtorch's at::IValue as far as custom autograd functions use it (ctx->saved_data).
// Reading it as another type than it holds fails, naming both, as at::IValue does.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <variant>

#include "core/tensor.h"

namespace gr {

class IValue {
 public:
  IValue() = default;
  IValue(double v) : value_(v) {}
  IValue(float v) : value_(static_cast<double>(v)) {}
  IValue(bool v) : value_(v) {}
  template <class T>
    requires(std::is_integral_v<T> && !std::is_same_v<T, bool>)
  IValue(T v) : value_(static_cast<int64_t>(v)) {}
  IValue(std::string v) : value_(std::move(v)) {}
  IValue(const char* v) : value_(std::string(v)) {}
  IValue(Tensor v) : value_(std::move(v)) {}

  bool isNone() const { return value_.index() == 0; }
  bool isDouble() const { return std::holds_alternative<double>(value_); }
  bool isInt() const { return std::holds_alternative<int64_t>(value_); }
  bool isBool() const { return std::holds_alternative<bool>(value_); }
  bool isString() const { return std::holds_alternative<std::string>(value_); }
  bool isTensor() const { return std::holds_alternative<Tensor>(value_); }

  double toDouble() const { return get<double>("Double"); }
  int64_t toInt() const { return get<int64_t>("Int"); }
  bool toBool() const { return get<bool>("Bool"); }
  const std::string& toStringRef() const { return get<std::string>("String"); }
  const Tensor& toTensor() const { return get<Tensor>("Tensor"); }
  // "None", "Double", "Int", "Bool", "String" or "Tensor".
  std::string tagKind() const;

 private:
  template <class T>
  const T& get(const char* expected) const {
    GR_CHECK(std::holds_alternative<T>(value_), "IValue: expected ", expected, " but got ", tagKind());
    return std::get<T>(value_);
  }

  std::variant<std::monostate, double, int64_t, bool, std::string, Tensor> value_;
};

inline std::string IValue::tagKind() const {
  static const char* const kinds[] = {"None", "Double", "Int", "Bool", "String", "Tensor"};
  return kinds[value_.index()];
}

}  // namespace gr
