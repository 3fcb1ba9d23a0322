// prod (of all elements, or along a dim) with backward. Each element's gradient is the
// product of the others: out / x when no input is zero, else the product of the exclusive
// running products from both sides (exact with any number of zeros, as torch).
#include "autograd/autocast.h"
#include "autograd/function.h"
#include "autograd/functions/reduce_grad.h"
#include "autograd/ops.h"
#include "core/factory.h"
#include "core/native/elementwise.h"
#include "core/native/reduce.h"

namespace gr {

using autograd::record;
using autograd::ReducedDims;
using autograd::SavedTensor;

namespace {

// prod_{i != k} x_i along dim d, for every k: exclusive cumprods from the left and the right.
Tensor product_of_others(const Tensor& x, int64_t d) {
  const int64_t n = x.size(d);
  if (n == 1) return ones_like(x);
  std::vector<int64_t> one_shape = x.sizes().vec();
  one_shape[d] = 1;
  Tensor one = ones(one_shape, x.options());
  Tensor left = cat({one, autograd::scan(x.narrow(d, 0, n - 1), d, true, false)}, d);
  Tensor right = cat({autograd::scan(x.narrow(d, 1, n - 1), d, true, true), one}, d);
  return left * right;
}

Tensor prod_impl(const Tensor& x, std::optional<int64_t> dim, bool keepdim, std::optional<ScalarType> dtype) {
  Tensor in = dtype && *dtype != x.scalar_type() ? x.to(*dtype) : x;
  const int64_t d = dim ? wrap_dim(*dim, in.dim(), "prod") : 0;
  const IntArrayRef dims = dim && in.dim() > 0 ? IntArrayRef(d) : IntArrayRef();
  Tensor out = native::prod(in, dims, keepdim);
  if (autograd::needs_grad(in) && out.is_floating_point()) {
    SavedTensor sx(in), so(out, /*is_output=*/true);  // Note [Saved outputs]
    record(dim ? "ProdBackward1" : "ProdBackward0", {in}, {out},  // prod.dim_int / prod
           [sx, so, r = ReducedDims(in.sizes(), dims, keepdim, "prod"), d, all = !dim](const TensorList& g,
                                                                                         const std::vector<bool>&) {
             const Tensor& xv = sx.unpack();
             if (xv.dim() == 0) return TensorList{g[0]};
             Tensor zero = native::eq(xv, native::wrapped_scalar(xv, 0));
             if (native::count_nonzero(zero).item<int64_t>() == 0)
               return TensorList{r.kept(g[0]) * r.kept(so.unpack()) / xv};
             Tensor others = all ? product_of_others(xv.reshape({-1}), 0).reshape(xv.sizes()) : product_of_others(xv, d);
             return TensorList{r.kept(g[0]) * others};
           });
  }
  return out;
}

}  // namespace

Tensor prod(const Tensor& x, std::optional<ScalarType> dtype) {
  GR_AUTOCAST(fp32, prod, x, dtype);
  return prod_impl(x, std::nullopt, false, dtype);
}
Tensor prod(const Tensor& x, int64_t dim, bool keepdim, std::optional<ScalarType> dtype) {
  GR_AUTOCAST(fp32, prod, x, dim, keepdim, dtype);
  return prod_impl(x, dim, keepdim, dtype);
}

Tensor Tensor::prod(std::optional<ScalarType> dtype) const { return gr::prod(*this, dtype); }
Tensor Tensor::prod(int64_t dim, bool keepdim, std::optional<ScalarType> dtype) const {
  return gr::prod(*this, dim, keepdim, dtype);
}

}  // namespace gr
