// Helpers shared by the reduction ops' backward functions (autograd/functions/*.cpp only):
// the dims a reduction covers and broadcasting a reduced gradient back over the input (the
// opposite direction, summing a broadcast gradient down, is autograd::sum_to in autograd/function.h).
#pragma once

#include <vector>

#include "core/tensor.h"

namespace gr::autograd {

// A libtorch dim argument as the natives take it: nullopt and empty both mean all dims.
inline IntArrayRef dims_or_all(OptionalIntArrayRef dim) { return dim ? *dim : IntArrayRef(); }

// What the backward of a reduction of an input of `sizes` over `mask` needs to know.
struct ReducedDims {
  std::vector<int64_t> sizes;  // the input's shape
  std::vector<bool> mask;      // the reduced dims
  bool keepdim = false;
  int64_t count = 1;           // elements per output

  ReducedDims(IntArrayRef input_sizes, IntArrayRef dims, bool keepdim, const char* op);
  // A reduced result (or its gradient) with the reduced dims back as size 1, a differentiable view.
  Tensor kept(const Tensor& r) const;
  // The same broadcast over the input's shape (a stride-0 view).
  Tensor expand(const Tensor& r) const;
};

// cumsum (or cumprod with `product`) along dim, differentiable, forwards or in reverse
// (out[r] combines x[r..]): backward passes run the scan the other way.
Tensor scan(const Tensor& x, int64_t dim, bool product, bool reverse);

}  // namespace gr::autograd
