// sum and mean (all elements or a dim list, keepdim, dtype) with backward, and the helpers of
// reduce_grad.h that every reduction's backward uses.
#include "autograd/function.h"
#include "autograd/functions/reduce_grad.h"
#include "autograd/ops.h"
#include "core/native/reduce/reduce.h"

namespace gr {

namespace autograd {

ReducedDims::ReducedDims(IntArrayRef input_sizes, IntArrayRef dims, bool keepdim_, const char* op)
    : sizes(input_sizes.vec()),
      mask(native::reduction_mask(dims, static_cast<int64_t>(input_sizes.size()), op)),
      keepdim(keepdim_),
      count(native::reduced_numel(input_sizes, mask)) {}

Tensor ReducedDims::kept(const Tensor& r) const {
  if (keepdim) return r;
  return r.reshape(native::reduced_shape(sizes, mask, true));
}

Tensor ReducedDims::expand(const Tensor& r) const { return kept(r).expand(sizes); }


}  // namespace autograd

using autograd::record;
using autograd::ReducedDims;

namespace {

// Gradients flow back through a floating result only; an integer dtype= cuts the graph.
bool differentiable(const Tensor& x, const Tensor& out) { return autograd::needs_grad(x) && out.is_floating_point(); }

// The gradient in the input's dtype (a dtype= argument changed it on the way out).
Tensor as_input_dtype(const Tensor& g, ScalarType t) { return g.scalar_type() == t ? g : g.to(t); }

// `node`: the whole-tensor overloads are SumBackward0/MeanBackward0, the dim overloads (even
// with dim = nullopt) SumBackward1/MeanBackward1, as ATen's sum and sum.dim_IntList.
Tensor sum_impl(const char* node, const Tensor& x, OptionalIntArrayRef dim, bool keepdim,
                std::optional<ScalarType> dtype) {
  const IntArrayRef dims = autograd::dims_or_all(dim);
  Tensor out = native::sum(x, dims, keepdim, dtype);
  if (differentiable(x, out)) {
    record(node, {x}, {out},
           [r = ReducedDims(x.sizes(), dims, keepdim, "sum"), t = x.scalar_type()](const TensorList& g,
                                                                                     const std::vector<bool>&) {
             return TensorList{as_input_dtype(r.expand(g[0]), t)};
           });
  }
  return out;
}

Tensor mean_impl(const char* node, const Tensor& x, OptionalIntArrayRef dim, bool keepdim,
                 std::optional<ScalarType> dtype) {
  const IntArrayRef dims = autograd::dims_or_all(dim);
  Tensor out = native::mean(x, dims, keepdim, dtype);
  if (differentiable(x, out)) {
    record(node, {x}, {out},
           [r = ReducedDims(x.sizes(), dims, keepdim, "mean"), t = x.scalar_type()](const TensorList& g,
                                                                                      const std::vector<bool>&) {
             return TensorList{as_input_dtype(r.expand(g[0] / static_cast<double>(r.count)), t)};
           });
  }
  return out;
}

}  // namespace

Tensor sum(const Tensor& x, OptionalIntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) {
  return sum_impl("SumBackward1", x, dim, keepdim, dtype);
}
Tensor sum(const Tensor& x, std::optional<ScalarType> dtype) { return sum_impl("SumBackward0", x, std::nullopt, false, dtype); }
Tensor mean(const Tensor& x, OptionalIntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) {
  return mean_impl("MeanBackward1", x, dim, keepdim, dtype);
}
Tensor mean(const Tensor& x, std::optional<ScalarType> dtype) {
  return mean_impl("MeanBackward0", x, std::nullopt, false, dtype);
}


}  // namespace gr
