// Reductions without autograd: sum, mean, prod, amax/amin, norms, any/all, count_nonzero,
// var/std (and with the mean), logsumexp, max/min with indices, argmax/argmin, and sum_to
// (the broadcasting adjoint). Inputs are viewed as a contiguous [outer, R, inner] block and R
// is reduced; the arithmetic is in core/reduce_functors.h. dims empty = all dims.
#pragma once

#include <optional>
#include <utility>

#include "core/dispatch.h"
#include "core/tensor.h"

namespace gr::native {

// Sum over R of in[outer, R, inner] into out[outer, inner]; in has dtype `in_t`, out `out_t`
// (the same floating dtype, or int64 for integers and bool).
using SumFn = void (*)(const void* in, void* out, int64_t outer, int64_t R, int64_t inner, ScalarType in_t,
                       ScalarType out_t);
GR_DECLARE_DISPATCH(SumFn, sum_stub);
// The other reductions of the same layout: out's dtype follows from in_t (see each op below);
// `param` is the op's number (mean: the divisor, norm: p), unused otherwise.
using ReduceFn = void (*)(const void* in, void* out, int64_t outer, int64_t R, int64_t inner, ScalarType in_t,
                          double param);
GR_DECLARE_DISPATCH(ReduceFn, mean_stub);           // floating, out = in
GR_DECLARE_DISPATCH(ReduceFn, prod_stub);           // out = in for floats, int64 for integers and bool
GR_DECLARE_DISPATCH(ReduceFn, amax_stub);           // out = in, NaN wins
GR_DECLARE_DISPATCH(ReduceFn, amin_stub);
GR_DECLARE_DISPATCH(ReduceFn, norm_stub);           // floating, out = in; p may be 0, +-inf or any other
GR_DECLARE_DISPATCH(ReduceFn, any_stub);            // out bool (uint8 for uint8 input, as torch)
GR_DECLARE_DISPATCH(ReduceFn, all_stub);
GR_DECLARE_DISPATCH(ReduceFn, count_nonzero_stub);  // out int64
// var (or std) over R with the divisor max(R - correction, 0); `mean_out` (may be null)
// receives the mean. Floating, outputs of dtype t.
using VarFn = void (*)(const void* in, void* out, void* mean_out, int64_t outer, int64_t R, int64_t inner,
                       ScalarType t, double correction, bool take_sqrt);
GR_DECLARE_DISPATCH(VarFn, var_stub);
// Max (or min) over R with the index of the first extreme; NaN wins, as in torch.
using MaxFn = void (*)(const void* in, void* values, int64_t* indices, int64_t outer, int64_t R, int64_t inner,
                       ScalarType t, bool is_max);
GR_DECLARE_DISPATCH(MaxFn, max_stub);

// The dtype sum and prod return: `dtype` when given, else int64 for integers and bool.
ScalarType sum_result_type(ScalarType input, std::optional<ScalarType> dtype);

// Integer and bool inputs sum to int64; `dtype` converts the input first (as torch).
Tensor sum(const Tensor& x, IntArrayRef dims = {}, bool keepdim = false,
           std::optional<ScalarType> dtype = std::nullopt);
Tensor mean(const Tensor& x, IntArrayRef dims = {}, bool keepdim = false,
            std::optional<ScalarType> dtype = std::nullopt);
Tensor prod(const Tensor& x, IntArrayRef dims = {}, bool keepdim = false,
            std::optional<ScalarType> dtype = std::nullopt);
Tensor amax(const Tensor& x, IntArrayRef dims = {}, bool keepdim = false);
Tensor amin(const Tensor& x, IntArrayRef dims = {}, bool keepdim = false);
// The vector p-norm (p = 0 counts non-zeros; +-inf are max/min of |x|); `op` names the
// caller in errors ("norm", "linalg.vector_norm").
Tensor vector_norm(const Tensor& x, double p, IntArrayRef dims = {}, bool keepdim = false,
                   std::optional<ScalarType> dtype = std::nullopt, const char* op = "linalg.vector_norm");
Tensor any(const Tensor& x, IntArrayRef dims = {}, bool keepdim = false);
Tensor all(const Tensor& x, IntArrayRef dims = {}, bool keepdim = false);
Tensor count_nonzero(const Tensor& x, IntArrayRef dims = {});
// Variance with `correction` (1 = unbiased); std is its square root. The second result of
// var_mean is the mean (both over the same dims).
Tensor var(const Tensor& x, IntArrayRef dims = {}, double correction = 1, bool keepdim = false);
Tensor std(const Tensor& x, IntArrayRef dims = {}, double correction = 1, bool keepdim = false);
std::pair<Tensor, Tensor> var_mean(const Tensor& x, IntArrayRef dims, double correction, bool keepdim,
                                   bool take_sqrt = false);
// log(sum(exp(x))) with the maximum subtracted first; integers compute in float32.
Tensor logsumexp(const Tensor& x, IntArrayRef dims, bool keepdim = false);

std::pair<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim = false);
std::pair<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor max(const Tensor& x);  // of all elements
Tensor min(const Tensor& x);
// With no dim: the index into the flattened tensor (keepdim keeps every dim as size 1).
Tensor argmax(const Tensor& x, std::optional<int64_t> dim, bool keepdim = false);
Tensor argmax(const Tensor& x);
Tensor argmin(const Tensor& x, std::optional<int64_t> dim, bool keepdim = false);

// Sums `x` down to `shape` (which broadcasts to x's shape): the adjoint of expand.
Tensor sum_to(const Tensor& x, IntArrayRef shape);
// The dims of `sizes` that sum_to(x, shape) sums over (with keepdim; the leading ones are
// then dropped); throws when `shape` does not broadcast to `sizes`.
std::vector<int64_t> sum_to_dims(IntArrayRef sizes, IntArrayRef shape);
// Which dims a reduction over `dims` covers (empty = all), as a mask over ndim dims.
std::vector<bool> reduction_mask(IntArrayRef dims, int64_t ndim, const char* op);
// The shape a reduction leaves: reduced dims dropped, or kept as 1.
std::vector<int64_t> reduced_shape(IntArrayRef sizes, const std::vector<bool>& mask, bool keepdim);
// The number of elements each output of a reduction over `mask` combines.
int64_t reduced_numel(IntArrayRef sizes, const std::vector<bool>& mask);

}  // namespace gr::native
