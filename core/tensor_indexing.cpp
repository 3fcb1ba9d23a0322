// gr::indexing's Slice and TensorIndex: construction checks and printing.
#include "core/tensor_indexing.h"

#include <cstring>

namespace gr::indexing {

Slice::Slice(std::optional<int64_t> start, std::optional<int64_t> stop, std::optional<int64_t> step) {
  step_ = step.value_or(1);
  GR_CHECK(step_ != 0, "Slice: slice step cannot be zero");
  start_ = start.value_or(step_ < 0 ? INDEX_MAX : 0);
  stop_ = stop.value_or(step_ < 0 ? INDEX_MIN : INDEX_MAX);
}

TensorIndex::TensorIndex(const char* str) : TensorIndex(Ellipsis) {
  GR_CHECK(std::strcmp(str, "...") == 0, "TensorIndex: expected \"...\" to represent an ellipsis index, but got \"",
           str, "\"");
}

std::ostream& operator<<(std::ostream& out, const Slice& slice) {
  return out << slice.start() << ":" << slice.stop() << ":" << slice.step();
}

std::ostream& operator<<(std::ostream& out, const TensorIndex& index) {
  if (index.is_none()) return out << "None";
  if (index.is_ellipsis()) return out << "...";
  if (index.is_integer()) return out << index.integer();
  if (index.is_boolean()) return out << (index.boolean() ? "true" : "false");
  if (index.is_slice()) return out << index.slice();
  return out << index.tensor().toString();
}

std::ostream& operator<<(std::ostream& out, const std::vector<TensorIndex>& indices) {
  out << "(";
  for (size_t i = 0; i < indices.size(); ++i) out << (i ? ", " : "") << indices[i];
  return out << ")";
}

}  // namespace gr::indexing
