// TensorDataset construction checks, and the row access of every dataset of tensor rows.
#include "data/datasets/tensor.h"

#include "core/native/shape.h"

namespace gr::data::datasets {

TensorDataset::TensorDataset(Tensor data, Tensor targets) : data_(std::move(data)), targets_(std::move(targets)) {
  GR_CHECK(data_.defined() && targets_.defined(), "TensorDataset: data and targets must be defined");
  GR_CHECK(data_.dim() >= 1 && targets_.dim() >= 1, "TensorDataset: data and targets need a first (example) dimension");
  GR_CHECK(data_.size(0) == targets_.size(0), "TensorDataset: data has ", data_.size(0), " examples but targets has ",
           targets_.size(0));
}

Example<> detail::row(const Tensor& data, const Tensor& targets, size_t index, const char* who) {
  const int64_t n = data.size(0);
  GR_CHECK(index < static_cast<size_t>(n), who, ": index ", index, " out of range [0, ", n, ")");
  const auto i = static_cast<int64_t>(index);
  return {native::select(data, 0, i), native::select(targets, 0, i)};
}

Example<> TensorDataset::get(size_t index) { return detail::row(data_, targets_, index, "TensorDataset"); }

}  // namespace gr::data::datasets
