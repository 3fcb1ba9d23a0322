// Reductions without autograd: sum, mean, max/min (with indices), argmax, var, and
// sum_to (the broadcasting adjoint). Inputs are viewed as [outer, R, inner] and R is reduced.
#pragma once

#include <utility>

#include "core/dispatch.h"
#include "core/tensor.h"

namespace gr::native {

// Sum over R of in[outer, R, inner] into out[outer, inner]; in has dtype `in_t`, out `out_t`.
using SumFn = void (*)(const void* in, void* out, int64_t outer, int64_t R, int64_t inner, ScalarType in_t,
                       ScalarType out_t);
GR_DECLARE_DISPATCH(SumFn, sum_stub);
// Max (or min) over R with the index of the first extreme; NaN wins, as in torch.
using MaxFn = void (*)(const void* in, void* values, int64_t* indices, int64_t outer, int64_t R, int64_t inner,
                       ScalarType t, bool is_max);
GR_DECLARE_DISPATCH(MaxFn, max_stub);

// dims empty = all dims. Integer and bool inputs sum to int64.
Tensor sum(const Tensor& x, IntArrayRef dims = {}, bool keepdim = false);
Tensor mean(const Tensor& x, IntArrayRef dims = {}, bool keepdim = false);
// Variance with `correction` (1 = unbiased).
Tensor var(const Tensor& x, IntArrayRef dims = {}, int64_t correction = 1, bool keepdim = false);
std::pair<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim = false);
std::pair<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor max(const Tensor& x);  // of all elements
Tensor min(const Tensor& x);
Tensor argmax(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor argmax(const Tensor& x);  // index into the flattened tensor

// Sums `x` down to `shape` (which broadcasts to x's shape): the adjoint of expand.
Tensor sum_to(const Tensor& x, IntArrayRef shape);
// The dims of `sizes` that sum_to(x, shape) sums over (with keepdim; the leading ones are
// then dropped); throws when `shape` does not broadcast to `sizes`.
std::vector<int64_t> sum_to_dims(IntArrayRef sizes, IntArrayRef shape);
// Which dims a reduction over `dims` covers (empty = all), as a mask over ndim dims.
std::vector<bool> reduction_mask(IntArrayRef dims, int64_t ndim, const char* op);
// The shape a reduction leaves: reduced dims dropped, or kept as 1.
std::vector<int64_t> reduced_shape(IntArrayRef sizes, const std::vector<bool>& mask, bool keepdim);

}  // namespace gr::native
