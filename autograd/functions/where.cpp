// where in all of libtorch's overloads (tensor/scalar operands, and where(condition) as one
// index tensor per dim), nonzero and argwhere. The backward routes the gradient through where
// itself, so it is differentiable again.
#include "autograd/function.h"
#include "autograd/functions/grad_reduce.h"
#include "autograd/ops.h"
#include "core/factory.h"
#include "core/native/elementwise.h"
#include "core/native/index_ops.h"

namespace gr {

using autograd::record;

Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b) {
  Tensor out = native::where(condition, a, b);
  if (autograd::needs_grad(a, b)) {
    record("WhereBackward", {a, b}, {out},
           [c = condition.detach(), sa = a.sizes().vec(), sb = b.sizes().vec()](const TensorList& g,
                                                                             const std::vector<bool>& needs) {
             return TensorList{needs[0] ? autograd::reduce_grad_to(where(c, g[0], 0), sa) : Tensor(),
                               needs[1] ? autograd::reduce_grad_to(where(c, 0, g[0]), sb) : Tensor()};
           });
  }
  return out;
}

Tensor where(const Tensor& condition, const Tensor& a, const Scalar& b) {
  return where(condition, a, native::wrapped_scalar(a, b));
}
Tensor where(const Tensor& condition, const Scalar& a, const Tensor& b) {
  return where(condition, native::wrapped_scalar(b, a), b);
}
// Two numbers: int64, or float32 (torch's default dtype) when one is floating.
Tensor where(const Tensor& condition, const Scalar& a, const Scalar& b) {
  const ScalarType t = a.is_floating_point() || b.is_floating_point() ? kFloat32 : kInt64;
  TensorOptions options = TensorOptions(t).device(condition.device());
  return native::where(condition, full({}, a, options), full({}, b, options));
}

std::vector<Tensor> where(const Tensor& condition) { return nonzero(condition).unbind(1); }

Tensor nonzero(const Tensor& self) { return native::nonzero(self); }
Tensor argwhere(const Tensor& self) { return native::nonzero(self); }

Tensor Tensor::where(const Tensor& condition, const Tensor& other) const { return gr::where(condition, *this, other); }
Tensor Tensor::where(const Tensor& condition, const Scalar& other) const { return gr::where(condition, *this, other); }
Tensor Tensor::nonzero() const { return native::nonzero(*this); }
Tensor Tensor::argwhere() const { return native::nonzero(*this); }

}  // namespace gr
