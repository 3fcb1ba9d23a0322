// TensorDataset construction checks and row access.
#include "data/tensor_dataset.h"

#include "core/native/shape/shape.h"

namespace gr::data {

TensorDataset::TensorDataset(Tensor data, Tensor targets) : data_(std::move(data)), targets_(std::move(targets)) {
  GR_CHECK(data_.defined() && targets_.defined(), "TensorDataset: data and targets must be defined");
  GR_CHECK(data_.dim() >= 1 && targets_.dim() >= 1, "TensorDataset: data and targets need a first (example) dimension");
  GR_CHECK(data_.size(0) == targets_.size(0), "TensorDataset: data has ", data_.size(0), " examples but targets has ",
           targets_.size(0));
}

Example<> TensorDataset::get(int64_t index) const {
  GR_CHECK(index >= 0 && index < size(), "TensorDataset: index ", index, " out of range [0, ", size(), ")");
  return {native::select(data_, 0, index), native::select(targets_, 0, index)};
}

}  // namespace gr::data
