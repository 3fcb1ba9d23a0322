// IntArrayRef: a non-owning view of int64 sizes/strides/dims that accepts {braces} and vectors.
#pragma once

#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <ostream>
#include <vector>

namespace gr {

class IntArrayRef {
 public:
  IntArrayRef() = default;
  // One value (stride = 2 means {2}); held inline. bool is excluded so that a flag passed
  // by mistake where dims are expected fails to compile instead of meaning {0} or {1}.
  template <std::integral T>
    requires(!std::same_as<T, bool>)
  IntArrayRef(T one) : one_(static_cast<int64_t>(one)), size_(1) {}
  IntArrayRef(const std::vector<int64_t>& v) : data_(v.data()), size_(v.size()) {}
  // Valid for the full expression it appears in, like any braced temporary; that is the
  // intent (as with c10::ArrayRef), so GCC's lifetime warning is silenced for this line.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
#endif
  IntArrayRef(std::initializer_list<int64_t> list) : data_(list.begin()), size_(list.size()) {}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
  IntArrayRef(const int64_t* data, size_t size) : data_(data), size_(size) {}

  const int64_t* data() const { return data_ ? data_ : &one_; }
  const int64_t* begin() const { return data(); }
  const int64_t* end() const { return data() + size_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int64_t operator[](size_t i) const { return data()[i]; }
  int64_t back() const { return data()[size_ - 1]; }
  std::vector<int64_t> vec() const { return {begin(), end()}; }
  bool operator==(IntArrayRef o) const;

 private:
  int64_t one_ = 0;
  const int64_t* data_ = nullptr;
  size_t size_ = 0;
};

// An optional list of dims (libtorch's at::OptionalIntArrayRef), accepting nullopt, {braces},
// vectors, IntArrayRef and one integer. A class rather than std::optional<IntArrayRef>,
// which a braced list cannot initialise.
class OptionalIntArrayRef {
 public:
  OptionalIntArrayRef() = default;
  OptionalIntArrayRef(std::nullopt_t) {}
  OptionalIntArrayRef(IntArrayRef a) : value_(a), has_value_(true) {}
  OptionalIntArrayRef(const std::vector<int64_t>& v) : value_(v), has_value_(true) {}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
#endif
  OptionalIntArrayRef(std::initializer_list<int64_t> list) : value_(list.begin(), list.size()), has_value_(true) {}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
  template <std::integral T>
    requires(!std::same_as<T, bool>)
  OptionalIntArrayRef(T one) : value_(one), has_value_(true) {}
  OptionalIntArrayRef(const std::optional<IntArrayRef>& o) : value_(o.value_or(IntArrayRef())), has_value_(o.has_value()) {}

  bool has_value() const { return has_value_; }
  explicit operator bool() const { return has_value_; }
  const IntArrayRef& operator*() const { return value_; }
  const IntArrayRef* operator->() const { return &value_; }
  IntArrayRef value_or(IntArrayRef other) const { return has_value_ ? value_ : other; }

 private:
  IntArrayRef value_;
  bool has_value_ = false;
};

// Prints [2, 3, 4].
std::ostream& operator<<(std::ostream& out, IntArrayRef a);

}  // namespace gr
