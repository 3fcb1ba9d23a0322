// cat and stack with backward: each input gets its slice of the output gradient.
#include "autograd/function.h"
#include "autograd/ops.h"
#include "core/native/shape.h"

namespace gr {

using autograd::record;

Tensor cat(const TensorList& tensors, int64_t dim) {
  Tensor out = native::cat(tensors, dim);
  if (autograd::needs_grad_list(tensors)) {
    int64_t d = wrap_dim(dim, tensors[0].dim(), "cat");
    std::vector<int64_t> lengths;
    for (const Tensor& t : tensors) lengths.push_back(t.size(d));
    record("CatBackward", tensors, {out}, [d, lengths](const TensorList& g, const std::vector<bool>& needs) {
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

Tensor stack(const TensorList& tensors, int64_t dim) {
  GR_CHECK(!tensors.empty(), "stack: expected a non-empty list of tensors");
  int64_t d = wrap_dim(dim, tensors[0].dim() + 1, "stack");
  TensorList parts;
  for (size_t i = 0; i < tensors.size(); ++i) {
    GR_CHECK(tensors[i].sizes() == tensors[0].sizes(), "stack: expects each tensor to be equal size, but got ",
             tensors[0].sizes(), " at entry 0 and ", tensors[i].sizes(), " at entry ", i);
    parts.push_back(tensors[i].unsqueeze(d));
  }
  return cat(parts, d);
}

}  // namespace gr
