// SavedTensor: a tensor kept for backward, with its autograd identity (so that a backward
// recorded under create_graph connects to it) and the version it was saved at.
#pragma once

#include "core/tensor.h"

namespace gr::autograd {

// Note [Version counter]
// Every in-place op bumps its storage's version. A saved tensor remembers the version it
// was saved at; unpacking it after an in-place change would silently give a wrong
// gradient, so unpack() fails instead, naming the tensor and both versions.
//
// Note [Saved outputs]
// A saved input (or leaf) is kept as the tensor itself: its grad_fn or accumulator stays
// reachable, so a double backward flows into it. A node's own output cannot be kept that
// way: output -> grad_fn -> saved output would be a reference cycle. As PyTorch's
// SavedVariable, it keeps only the data; unpack() rebuilds a tensor whose grad_fn is the
// node running (current_node(), i.e. the node that saved it, whose weak self-reference
// stands in for PyTorch's weak grad_fn) when grad mode is on, so the rebuilt output
// connects to the same place the original did. Pass is_output = true for those.
class SavedTensor {
 public:
  SavedTensor() = default;
  // Fails for an inference tensor (see Note [Inference tensors] in grad_mode.h).
  explicit SavedTensor(const Tensor& t, bool is_output = false, uint32_t output_nr = 0);
  // The saved tensor; throws if it was modified in place since it was saved.
  Tensor unpack() const;
  bool defined() const { return data_.defined(); }

 private:
  Tensor data_;
  uint32_t version_ = 0;
  bool is_output_ = false;
  uint32_t output_nr_ = 0;
};

}  // namespace gr::autograd
