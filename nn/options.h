// Helpers for libtorch-style option structs: GR_ARG declares a chainable setter/getter,
// ExpandingArray<N> accepts one value for every dim or exactly N values.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <ostream>

#include "core/arg.h"
#include "core/error.h"
#include "core/int_array_ref.h"

namespace gr::nn {

template <size_t N>
class ExpandingArray {
 public:
  ExpandingArray(int64_t v) { values_.fill(v); }
  ExpandingArray(std::initializer_list<int64_t> list) {
    GR_CHECK(list.size() == N, "expected ", N, " values, got ", list.size());
    std::copy(list.begin(), list.end(), values_.begin());
  }
  int64_t operator[](size_t i) const { return values_[i]; }
  operator IntArrayRef() const { return IntArrayRef(values_.data(), N); }
  IntArrayRef ref() const { return IntArrayRef(values_.data(), N); }
  bool operator==(const ExpandingArray& o) const { return values_ == o.values_; }

 private:
  std::array<int64_t, N> values_{};
};

template <size_t N>
std::ostream& operator<<(std::ostream& out, const ExpandingArray<N>& a) {
  return out << a.ref();
}

}  // namespace gr::nn
