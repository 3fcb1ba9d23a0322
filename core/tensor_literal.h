// gr::tensor from nested initializer lists of any depth, scalars and vectors, as libtorch's
// torch::tensor (detail::TensorDataContainer): {{1, 2}, {3, 4}} is a 2x2 int64 tensor,
// {{1.5}, {2.5}} a 2x1 float32 one; ragged lists are an error, never a silent 1-D tensor.
#pragma once

#include <initializer_list>
#include <type_traits>
#include <vector>

#include "core/tensor.h"

namespace gr {

namespace detail {

// The dtype of a C++ value in a literal (int -> int32, long -> int64, double -> float64...).
template <class T>
constexpr ScalarType literal_scalar_type() {
  if constexpr (std::is_same_v<T, bool>) return kBool;
  else if constexpr (std::is_same_v<T, BFloat16>) return kBFloat16;
  else if constexpr (std::is_same_v<T, Half>) return kFloat16;
  else if constexpr (std::is_floating_point_v<T>) return sizeof(T) == 4 ? kFloat32 : kFloat64;
  else if constexpr (std::is_unsigned_v<T> && sizeof(T) == 1) return kUInt8;
  else if constexpr (std::is_unsigned_v<T> || sizeof(T) == 8) return kInt64;
  else return sizeof(T) == 4 ? kInt32 : sizeof(T) == 2 ? kInt16 : kInt8;
}

template <class T>
concept LiteralScalar = std::is_arithmetic_v<T> || std::is_same_v<T, BFloat16> || std::is_same_v<T, Half>;

// One node of a tensor literal: a scalar, a braced list of nodes, or a vector's values (held
// as a 1-D tensor). Lists hold their std::initializer_list, which lives until the end of the
// full expression that calls gr::tensor: build and use a container in one expression.
class TensorDataContainer {
 public:
  // {}: an empty 1-D tensor.
  TensorDataContainer() : kind_(Kind::List), type_(kFloat32), sizes_{0} {}
  template <LiteralScalar T>
  TensorDataContainer(T value) : kind_(Kind::Scalar), type_(literal_scalar_type<T>()), scalar_(value) {}
  TensorDataContainer(std::initializer_list<TensorDataContainer> list);
  template <LiteralScalar T>
  TensorDataContainer(const std::vector<T>& values) : kind_(Kind::Vector), type_(literal_scalar_type<T>()) {
    sizes_ = {static_cast<int64_t>(values.size())};
    values_ = vector_tensor(values.data(), values.size(), type_);
  }
  TensorDataContainer(const std::vector<bool>& values);

  // The literal's shape and the dtype its C++ values have (promoted across a list).
  IntArrayRef sizes() const { return sizes_; }
  ScalarType scalar_type() const { return type_; }
  // The CPU tensor holding the values in `dtype`; `op` names the caller in errors.
  Tensor to_tensor(ScalarType dtype, const char* op) const;

 private:
  enum class Kind { Scalar, List, Vector };
  static Tensor vector_tensor(const void* data, size_t n, ScalarType type);
  void write(char*& out, ScalarType dtype, const char* op) const;

  Kind kind_;
  ScalarType type_;
  std::vector<int64_t> sizes_;
  Scalar scalar_;
  std::initializer_list<TensorDataContainer> list_;
  Tensor values_;
};

}  // namespace detail

// A new tensor holding a copy of the literal. Without a dtype in options, integers give
// int64 and floating values float32, as libtorch (bool, uint8, int16 and int8 literals keep
// theirs); elements of mixed types promote (libtorch refuses them). Each scalar of a braced
// list must fit the dtype (gr::tensor({300}, kInt8) throws, as its fill_ does); vectors are
// converted as to() converts.
Tensor tensor(detail::TensorDataContainer data, TensorOptions options = {});

}  // namespace gr
