// The values of arange, linspace and logspace, computed on the CPU as torch's CPU kernels
// compute them (see Note [Range rounding] in range.cpp).
#pragma once

#include "core/tensor.h"

namespace gr::native {

// [start, end) in steps of `step`: ceil((end - start) / step) values, as torch counts them.
Tensor arange_cpu(const Scalar& start, const Scalar& end, const Scalar& step, ScalarType dtype);
Tensor linspace_cpu(const Scalar& start, const Scalar& end, int64_t steps, ScalarType dtype);
Tensor logspace_cpu(const Scalar& start, const Scalar& end, int64_t steps, double base, ScalarType dtype);

}  // namespace gr::native
