// median and nanmedian without autograd: the lower of the two middle values, over all
// elements or along a dim with the index of the value chosen (NaN as torch: median returns
// the first NaN of a run that has one, nanmedian skips NaN and gives NaN for all-NaN runs).
#pragma once

#include <utility>

#include "core/dispatch.h"
#include "core/tensor.h"

namespace gr::native {

// Median of R values of in[outer, R, inner] (contiguous, R >= 1) into values/indices [outer, inner].
using MedianFn = void (*)(const void* in, void* values, int64_t* indices, int64_t outer, int64_t R, int64_t inner,
                          ScalarType t, bool ignore_nan);
GR_DECLARE_DISPATCH(MedianFn, median_stub);

std::pair<Tensor, Tensor> median(const Tensor& x, int64_t dim, bool keepdim, bool ignore_nan);
Tensor median(const Tensor& x, bool ignore_nan);  // of all elements; NaN for an empty tensor

}  // namespace gr::native
