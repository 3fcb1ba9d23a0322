// logsumexp with backward: d/dx log(sum(exp(x))) = exp(x - result), computed from the saved
// result so it stays stable.
#include "autograd/function.h"
#include "autograd/functions/reduce_grad.h"
#include "autograd/ops.h"
#include "core/native/reduce.h"

namespace gr {

using autograd::record;
using autograd::ReducedDims;
using autograd::SavedTensor;

Tensor logsumexp(const Tensor& x, IntArrayRef dim, bool keepdim) {
  Tensor out = native::logsumexp(x, dim, keepdim);
  if (autograd::needs_grad(x)) {
    SavedTensor sx(x), so(out, /*is_output=*/true);  // Note [Saved outputs]
    record("LogsumexpBackward0", {x}, {out},
           [sx, so, r = ReducedDims(x.sizes(), dim, keepdim, "logsumexp")](const TensorList& g,
                                                                            const std::vector<bool>&) {
             return TensorList{r.kept(g[0]) * exp(sx.unpack() - r.kept(so.unpack()))};
           });
  }
  return out;
}

Tensor Tensor::logsumexp(IntArrayRef dim, bool keepdim) const { return gr::logsumexp(*this, dim, keepdim); }

}  // namespace gr
