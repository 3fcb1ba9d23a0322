// softmax and log_softmax along a dim, and their backward formulas (no autograd).
#pragma once

#include "core/dispatch.h"
#include "core/tensor.h"

namespace gr::native {

// in/out contiguous [outer, R, inner]; softmax over R. `log` selects log_softmax.
using SoftmaxFn = void (*)(const void* in, void* out, int64_t outer, int64_t R, int64_t inner, ScalarType t, bool log);
GR_DECLARE_DISPATCH(SoftmaxFn, softmax_stub);
// grad_in = log ? g - exp(y) * sum(g) : y * (g - sum(g * y)), sums over R.
using SoftmaxBackwardFn = void (*)(const void* grad, const void* out, void* grad_in, int64_t outer, int64_t R,
                                   int64_t inner, ScalarType t, bool log);
GR_DECLARE_DISPATCH(SoftmaxBackwardFn, softmax_backward_stub);

Tensor softmax(const Tensor& x, int64_t dim, bool log);
Tensor softmax_backward(const Tensor& grad, const Tensor& out, int64_t dim, bool log);

}  // namespace gr::native
