// Shape ops without autograd: views that share storage (view, permute, transpose, slice,
// select, expand, squeeze, unsqueeze) and the copies cat/stack.
#pragma once

#include <optional>

#include "core/tensor.h"

namespace gr::native {

// Resolves one -1 in `shape` so the product is `numel`; `op` names the caller in errors.
std::vector<int64_t> infer_size(IntArrayRef shape, int64_t numel, const char* op);
// Strides that view (sizes, strides) as new_sizes without copying, if possible.
std::optional<std::vector<int64_t>> view_strides(IntArrayRef sizes, IntArrayRef strides, IntArrayRef new_sizes);

Tensor view(const Tensor& t, IntArrayRef shape);     // throws when a copy would be needed
Tensor reshape(const Tensor& t, IntArrayRef shape);  // a view when possible, else a copy
Tensor permute(const Tensor& t, IntArrayRef dims);
Tensor transpose(const Tensor& t, int64_t d0, int64_t d1);
Tensor slice(const Tensor& t, int64_t dim, int64_t start, int64_t end, int64_t step = 1);  // clamps like Python
Tensor narrow(const Tensor& t, int64_t dim, int64_t start, int64_t length);                 // exact bounds
Tensor select(const Tensor& t, int64_t dim, int64_t index);
Tensor expand(const Tensor& t, IntArrayRef shape);  // -1 keeps a dim
Tensor squeeze(const Tensor& t);
Tensor squeeze(const Tensor& t, int64_t dim);
Tensor unsqueeze(const Tensor& t, int64_t dim);
Tensor flatten(const Tensor& t, int64_t start_dim, int64_t end_dim);
// The inverse of a permutation.
std::vector<int64_t> inverse_permutation(IntArrayRef dims);

Tensor cat(const TensorList& tensors, int64_t dim);
Tensor stack(const TensorList& tensors, int64_t dim);

}  // namespace gr::native
