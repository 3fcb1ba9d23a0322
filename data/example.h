// Example: one input and its target, as torch::data::Example (the element of every dataset).
#pragma once

#include <utility>

#include "core/tensor.h"

namespace gr::data {

namespace example {
using NoTarget = void;
}  // namespace example

// Example<> is a tensor and its target tensor; Example<Data, Target> holds other types.
template <typename Data = Tensor, typename Target = Tensor>
struct Example {
  using DataType = Data;
  using TargetType = Target;

  Example() = default;
  Example(Data data, Target target) : data(std::move(data)), target(std::move(target)) {}

  Data data;
  Target target;
};

// An example without a target (TensorExample: just a tensor).
template <typename Data>
struct Example<Data, example::NoTarget> {
  using DataType = Data;
  using TargetType = example::NoTarget;

  Example() = default;
  /* implicit */ Example(Data data) : data(std::move(data)) {}

  operator Data&() { return data; }
  operator const Data&() const { return data; }

  Data data;
};

using TensorExample = Example<Tensor, example::NoTarget>;

}  // namespace gr::data
