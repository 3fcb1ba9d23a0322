// TensorDataset: examples are the rows (dim 0) of a data tensor and a target tensor.
#pragma once

#include "data/datasets/base.h"

namespace gr::data::datasets {

namespace detail {
// Example `index` of a dataset of tensor rows: row `index` of each; `who` names the dataset
// in the out-of-range error.
Example<> row(const Tensor& data, const Tensor& targets, size_t index, const char* who);
}  // namespace detail

// libtorch's TensorDataset holds one tensor (examples are TensorExample); gradring's holds
// an input and a target (docs/porting-from-libtorch.md).
class TensorDataset : public Dataset<TensorDataset> {
 public:
  // data [N, ...] and targets [N, ...] must have the same first dimension.
  TensorDataset(Tensor data, Tensor targets);

  Example<> get(size_t index) override;
  std::optional<size_t> size() const override { return static_cast<size_t>(data_.size(0)); }
  const Tensor& data() const { return data_; }
  const Tensor& targets() const { return targets_; }
  // The examples as rows of two tensors (Note [Row gather]).
  Example<> rows() const { return {data_, targets_}; }

 private:
  Tensor data_, targets_;
};

}  // namespace gr::data::datasets
