// cat and stack with backward: each input gets its slice of the output gradient.
#include "autograd/function.h"
#include "autograd/ops.h"
#include "core/native/shape/shape.h"

namespace gr {

using autograd::record;

Tensor cat(const TensorList& tensors, int64_t dim) {
  Tensor out = native::cat(tensors, dim);
  if (autograd::needs_grad_list(tensors)) {
    int64_t d = wrap_dim(dim, tensors[0].dim(), "cat");
    std::vector<int64_t> lengths;
    for (const Tensor& t : tensors) lengths.push_back(t.size(d));
    record("CatBackward0", tensors, {out}, [d, lengths](const TensorList& g, const std::vector<bool>& needs) {
      TensorList grads;
      int64_t at = 0;
      for (size_t i = 0; i < lengths.size(); ++i) {
        grads.push_back(needs[i] ? g[0].narrow(d, at, lengths[i]) : Tensor());
        at += lengths[i];
      }
      return grads;
    });
  }
  return out;
}

// The forward (and its checks) is native::stack, which the DataLoader uses too.
Tensor stack(const TensorList& tensors, int64_t dim) {
  Tensor out = native::stack(tensors, dim);
  if (autograd::needs_grad_list(tensors)) {
    const int64_t d = wrap_dim(dim, tensors[0].dim() + 1, "stack");
    record("StackBackward0", tensors, {out}, [d](const TensorList& g, const std::vector<bool>& needs) {
      TensorList grads;
      for (size_t i = 0; i < needs.size(); ++i) grads.push_back(needs[i] ? g[0].select(d, static_cast<int64_t>(i)) : Tensor());
      return grads;
    });
  }
  return out;
}

}  // namespace gr
