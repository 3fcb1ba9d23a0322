// Dataset: the interface every data source implements (size and one example by index).
#pragma once

#include <cstdint>

#include "core/tensor.h"

namespace gr::data {

// One example: the input and its target (a class index for classification).
struct Example {
  Tensor data;
  Tensor target;
};

class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual int64_t size() const = 0;
  // Example `index` in [0, size()); out-of-range indices throw gr::Error.
  virtual Example get(int64_t index) const = 0;
};

}  // namespace gr::data
