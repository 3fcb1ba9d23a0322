// SavedTensor: a tensor kept for backward. It holds the data only (no history, so an
// output saved by its own node makes no reference cycle) and the version at save time.
#pragma once

#include "core/tensor.h"

namespace gr::autograd {

// Note [Version counter]
// Every in-place op bumps its storage's version. A saved tensor remembers the version it
// was saved at; unpacking it after an in-place change would silently give a wrong
// gradient, so unpack() fails instead, naming the tensor and both versions.
class SavedTensor {
 public:
  SavedTensor() = default;
  explicit SavedTensor(const Tensor& t);
  // The saved data; throws if it was modified in place since it was saved.
  const Tensor& unpack() const;
  bool defined() const { return data_.defined(); }

 private:
  Tensor data_;
  uint32_t version_ = 0;
};

}  // namespace gr::autograd
