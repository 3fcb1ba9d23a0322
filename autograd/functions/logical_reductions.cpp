// any, all and count_nonzero: reductions with bool (or count) results, not differentiable.
#include "autograd/functions/reduce_grad.h"
#include "autograd/ops.h"
#include "core/native/reduce/reduce.h"

namespace gr {

Tensor any(const Tensor& x) { return native::any(x); }
Tensor any(const Tensor& x, int64_t dim, bool keepdim) { return native::any(x, dim, keepdim); }
Tensor any(const Tensor& x, OptionalIntArrayRef dim, bool keepdim) {
  return native::any(x, autograd::dims_or_all(dim), keepdim);
}
Tensor all(const Tensor& x) { return native::all(x); }
Tensor all(const Tensor& x, int64_t dim, bool keepdim) { return native::all(x, dim, keepdim); }
Tensor all(const Tensor& x, OptionalIntArrayRef dim, bool keepdim) {
  return native::all(x, autograd::dims_or_all(dim), keepdim);
}
Tensor count_nonzero(const Tensor& x, IntArrayRef dim) { return native::count_nonzero(x, dim); }
Tensor count_nonzero(const Tensor& x, std::optional<int64_t> dim) {
  return dim ? native::count_nonzero(x, *dim) : native::count_nonzero(x);
}


}  // namespace gr
