// TensorDataset: examples are the rows (dim 0) of a data tensor and a target tensor.
#pragma once

#include "data/dataset.h"

namespace gr::data {

class TensorDataset : public Dataset {
 public:
  // data [N, ...] and targets [N, ...] must have the same first dimension.
  TensorDataset(Tensor data, Tensor targets);
  int64_t size() const override { return data_.size(0); }
  Example<> get(int64_t index) const override;
  std::optional<Example<>> as_tensors() const override { return Example<>{data_, targets_}; }
  const Tensor& data() const { return data_; }
  const Tensor& targets() const { return targets_; }

 private:
  Tensor data_, targets_;
};

}  // namespace gr::data
