// Shape ops without autograd that rearrange elements: the diagonal view, and the copies flip,
// roll and the triangle masks of tril/triu. They run on any device through copy_ and the
// element-wise kernels.
#pragma once

#include "core/tensor.h"

namespace gr::native {

// A view of the diagonal `offset` of dims dim1 and dim2, appended as the last dim.
Tensor diagonal(const Tensor& t, int64_t offset, int64_t dim1, int64_t dim2);
Tensor flip(const Tensor& t, IntArrayRef dims);
// dims empty: roll the flattened tensor.
Tensor roll(const Tensor& t, IntArrayRef shifts, IntArrayRef dims);
// [rows, cols] bool on `device`: true where col - row <= k (lower) or col - row >= k (upper).
Tensor triangle_mask(int64_t rows, int64_t cols, int64_t k, bool lower, Device device);

}  // namespace gr::native
