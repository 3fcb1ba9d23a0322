// Stack: collates a batch of examples into one example of stacked tensors (dim 0 new).
#pragma once

#include <utility>
#include <vector>

#include "autograd/ops.h"
#include "data/example.h"
#include "data/transforms/base.h"

namespace gr::data::transforms {

// A transform from a vector of examples to one batch.
template <typename BatchType, typename T = std::vector<BatchType>>
using Collation = BatchTransform<T, BatchType>;

template <typename T = Example<>>
struct Stack;

// data [B, ...] and target [B, ...].
template <>
struct Stack<Example<>> : public Collation<Example<>> {
  Example<> apply_batch(std::vector<Example<>> examples) override {
    TensorList data, targets;
    data.reserve(examples.size());
    targets.reserve(examples.size());
    for (Example<>& example : examples) {
      data.push_back(std::move(example.data));
      targets.push_back(std::move(example.target));
    }
    return {gr::stack(data), gr::stack(targets)};
  }
};

template <>
struct Stack<TensorExample> : public Collation<TensorExample> {
  TensorExample apply_batch(std::vector<TensorExample> examples) override {
    TensorList data;
    data.reserve(examples.size());
    for (TensorExample& example : examples) data.push_back(std::move(example.data));
    return gr::stack(data);
  }
};

}  // namespace gr::data::transforms
