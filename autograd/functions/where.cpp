// where's other overloads (a number first, two numbers, and where(condition) as one index
// tensor per dim; where(condition, tensor, tensor|number) is in selection.cpp), nonzero and
// argwhere.
#include "autograd/ops.h"
#include "core/factory.h"
#include "core/native/elementwise/elementwise.h"
#include "core/native/index/index_ops.h"

namespace gr {

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

}  // namespace gr
