// gr::indexing: the index expressions of Tensor::index and index_put_, as libtorch's
// at::indexing: None (a new axis), Ellipsis (or "..."), Slice(start, stop, step) with None for
// open ends, integers, bools, and tensors (integer index tensors or boolean masks).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <ostream>
#include <type_traits>
#include <vector>

#include "core/tensor.h"

namespace gr::indexing {

constexpr int64_t INDEX_MIN = std::numeric_limits<int64_t>::min();
constexpr int64_t INDEX_MAX = std::numeric_limits<int64_t>::max();

constexpr std::nullopt_t None = std::nullopt;

struct EllipsisIndexType {};
inline constexpr EllipsisIndexType Ellipsis{};

// start:stop:step. Open ends (None) take the whole dim, as Python's slices; the step must be
// positive when the slice is applied (as torch), never zero.
class Slice {
 public:
  Slice(std::optional<int64_t> start = std::nullopt, std::optional<int64_t> stop = std::nullopt,
        std::optional<int64_t> step = std::nullopt);
  int64_t start() const { return start_; }
  int64_t stop() const { return stop_; }
  int64_t step() const { return step_; }

 private:
  int64_t start_, stop_, step_;
};

enum class TensorIndexType { None, Ellipsis, Integer, Boolean, Slice, Tensor };

// One entry of an index expression; the implicit constructors let {Slice(), 0, None, t} build
// an initializer list of them.
struct TensorIndex {
  TensorIndex(std::nullopt_t) : type_(TensorIndexType::None) {}
  TensorIndex(EllipsisIndexType) : type_(TensorIndexType::Ellipsis) {}
  TensorIndex(const char* str);  // "..." only
  TensorIndex(int64_t integer) : integer_(integer), type_(TensorIndexType::Integer) {}
  TensorIndex(int integer) : TensorIndex(static_cast<int64_t>(integer)) {}
  template <class T>
    requires std::is_same_v<T, bool>
  TensorIndex(T boolean) : boolean_(boolean), type_(TensorIndexType::Boolean) {}
  TensorIndex(Slice slice) : slice_(slice), type_(TensorIndexType::Slice) {}
  TensorIndex(Tensor tensor) : tensor_(std::move(tensor)), type_(TensorIndexType::Tensor) {}

  bool is_none() const { return type_ == TensorIndexType::None; }
  bool is_ellipsis() const { return type_ == TensorIndexType::Ellipsis; }
  bool is_integer() const { return type_ == TensorIndexType::Integer; }
  int64_t integer() const { return integer_; }
  bool is_boolean() const { return type_ == TensorIndexType::Boolean; }
  bool boolean() const { return boolean_; }
  bool is_slice() const { return type_ == TensorIndexType::Slice; }
  const Slice& slice() const { return slice_; }
  bool is_tensor() const { return type_ == TensorIndexType::Tensor; }
  const Tensor& tensor() const { return tensor_; }

 private:
  int64_t integer_ = 0;
  bool boolean_ = false;
  Slice slice_;
  Tensor tensor_;
  TensorIndexType type_;
};

// Printed as libtorch prints them: "None", "...", "0:3:1", "true", and a tensor's type and shape.
std::ostream& operator<<(std::ostream& out, const Slice& slice);
std::ostream& operator<<(std::ostream& out, const TensorIndex& index);
std::ostream& operator<<(std::ostream& out, const std::vector<TensorIndex>& indices);

}  // namespace gr::indexing
