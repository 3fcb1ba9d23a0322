// Sorting along a dim without autograd: sort (stable or not; NaN sorts as the largest value,
// as torch) and topk. The kernels see the slices along the dim as rows of a [rows, n] tensor.
#pragma once

#include <utility>

#include "core/dispatch.h"
#include "core/tensor.h"

namespace gr::native {

// Sorts each row of values ([rows, n], contiguous) in place and writes the original positions
// to indices ([rows, n] int64). Ties keep their order when stable; otherwise they come out in
// the order torch's CPU kernel (std::sort on (value, index) pairs) leaves them.
using SortFn = void (*)(const Tensor& values, const Tensor& indices, bool descending, bool stable);
GR_DECLARE_DISPATCH(SortFn, sort_stub);
// The k largest (smallest) of each row of src ([rows, n], contiguous) into values and indices
// ([rows, k]), by torch's CPU algorithm (partial_sort, or nth_element then sort), so ties and
// the order of unsorted results are torch's.
using TopkFn = void (*)(const Tensor& src, const Tensor& values, const Tensor& indices, int64_t k, bool largest,
                        bool sorted);
GR_DECLARE_DISPATCH(TopkFn, topk_stub);

// (values, indices), both contiguous in self's shape.
std::pair<Tensor, Tensor> sort(const Tensor& self, int64_t dim, bool descending, bool stable);
std::pair<Tensor, Tensor> topk(const Tensor& self, int64_t k, int64_t dim, bool largest, bool sorted);

}  // namespace gr::native
