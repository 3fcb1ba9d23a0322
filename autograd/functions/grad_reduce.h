// reduce_grad_to: sums a gradient down to the shape of an input that was broadcast, with
// differentiable ops (the twin of native::sum_to for backward functions that must be
// differentiable again; see Note [Double backward]).
#pragma once

#include <vector>

#include "autograd/ops.h"

namespace gr::autograd {

// `shape` broadcasts to g's shape; leading dims and dims where shape has 1 are summed.
inline Tensor reduce_grad_to(const Tensor& g, IntArrayRef shape) {
  if (g.sizes() == shape) return g;
  const int64_t lead = g.dim() - static_cast<int64_t>(shape.size());
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < g.dim(); ++d)
    if (d < lead || (shape[d - lead] == 1 && g.size(d) != 1)) dims.push_back(d);
  Tensor r = dims.empty() ? g : g.sum(dims, true);
  return r.reshape(shape);
}

}  // namespace gr::autograd
