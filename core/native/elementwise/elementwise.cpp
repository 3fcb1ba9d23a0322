// Element-wise native ops: each picks its dtypes and runs its stub through the shared driver
// (elementwise_run.h). The CPU kernels are in elementwise_cpu.cpp.
#include "core/native/elementwise/elementwise.h"

#include "core/factory.h"
#include "core/native/copy/copy.h"
#include "core/native/elementwise/elementwise_run.h"

namespace gr::native {

#define GR_ELEMENTWISE_KERNEL(stub, kind, F) GR_DEFINE_DISPATCH(ElementwiseFn, stub##_stub);
#include "core/native/elementwise/elementwise_ops.def"

Tensor wrapped_scalar(const Tensor& like, const Scalar& s) {
  ScalarType t = like.scalar_type();
  if (!is_floating_point(t) && s.is_floating_point()) t = kFloat32;
  if (t == kBool && !s.is_floating_point()) t = kInt64;
  // Not full(): a number wraps into the tensor's dtype (int8 + 300 is int8 + 44, as torch's
  // wrapped numbers), where full() refuses a value that overflows.
  Tensor out = empty({}, TensorOptions(t).device(like.device()));
  fill_(out, s);
  return out;
}

Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  ScalarType t = promote_types(a.scalar_type(), b.scalar_type());
  return run_binary(add_stub, "add", a, b, t, t, alpha);
}
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  ScalarType t = promote_types(a.scalar_type(), b.scalar_type());
  return run_binary(sub_stub, "sub", a, b, t, t, alpha);
}
Tensor mul(const Tensor& a, const Tensor& b) {
  ScalarType t = promote_types(a.scalar_type(), b.scalar_type());
  return run_binary(mul_stub, "mul", a, b, t, t);
}
Tensor div(const Tensor& a, const Tensor& b) {
  ScalarType t = floating_or_float32(promote_types(a.scalar_type(), b.scalar_type()));
  return run_binary(div_stub, "div", a, b, t, t);
}
Tensor pow(const Tensor& a, const Tensor& b) {
  ScalarType t = promote_types(a.scalar_type(), b.scalar_type());
  return run_binary(pow_stub, "pow", a, b, t, t);
}
Tensor pow(const Tensor& a, const Scalar& exponent) {
  ScalarType t = a.scalar_type();
  if (!is_floating_point(t) && exponent.is_floating_point()) t = kFloat32;
  GR_CHECK(is_floating_point(t) || exponent.to_int64() >= 0, "pow: integers to negative integer powers are not allowed");
  return run_unary(pow_scalar_stub, a, t, exponent);
}
Tensor maximum(const Tensor& a, const Tensor& b) {
  ScalarType t = promote_types(a.scalar_type(), b.scalar_type());
  return run_binary(maximum_stub, "maximum", a, b, t, t);
}
Tensor minimum(const Tensor& a, const Tensor& b) {
  ScalarType t = promote_types(a.scalar_type(), b.scalar_type());
  return run_binary(minimum_stub, "minimum", a, b, t, t);
}

void add_(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  run_binary_inplace(add_stub, "add_", self, other, alpha);
}
void sub_(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  run_binary_inplace(sub_stub, "sub_", self, other, alpha);
}
void mul_(const Tensor& self, const Tensor& other) { run_binary_inplace(mul_stub, "mul_", self, other); }
void div_(const Tensor& self, const Tensor& other) {
  GR_CHECK(self.is_floating_point(), "div_: true division of an integer tensor in place is not possible (result is ",
           "float); use div()");
  run_binary_inplace(div_stub, "div_", self, other);
}

#define GR_COMPARISON(name)                                                        \
  Tensor name(const Tensor& a, const Tensor& b) {                                  \
    ScalarType t = promote_types(a.scalar_type(), b.scalar_type());                \
    return run_binary(name##_stub, #name, a, b, t, kBool);                         \
  }
GR_COMPARISON(eq)
GR_COMPARISON(ne)
GR_COMPARISON(gt)
GR_COMPARISON(lt)
GR_COMPARISON(ge)
GR_COMPARISON(le)
#undef GR_COMPARISON

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  check_same_device(cond, a, "where");
  check_same_device(a, b, "where");
  GR_CHECK(cond.scalar_type() == kBool, "where: condition must be a bool tensor, got ", cond.scalar_type());
  ScalarType t = promote_types(a.scalar_type(), b.scalar_type());
  std::vector<int64_t> shape = broadcast_shapes(broadcast_shapes(cond.sizes(), a.sizes(), "where"), b.sizes(), "where");
  Tensor out = empty(shape, TensorOptions(t).device(a.device()));
  Tensor ac = to_dtype(a, t), bc = to_dtype(b, t);
  StridedLoop L = make_strided_loop({out, cond, ac, bc}, shape);
  where_stub(a.device(), L, t, 0);
  return out;
}

Tensor neg(const Tensor& a) {
  GR_CHECK(a.scalar_type() != kBool, "neg: negation of a bool tensor is not supported");
  return run_unary(neg_stub, a, a.scalar_type());
}
Tensor exp(const Tensor& a) { return run_unary(exp_stub, a, floating_or_float32(a.scalar_type())); }
Tensor log(const Tensor& a) { return run_unary(log_stub, a, floating_or_float32(a.scalar_type())); }
Tensor sqrt(const Tensor& a) { return run_unary(sqrt_stub, a, floating_or_float32(a.scalar_type())); }
Tensor abs(const Tensor& a) { return run_unary(abs_stub, a, a.scalar_type()); }
Tensor relu(const Tensor& a) { return run_unary(relu_stub, a, a.scalar_type()); }
Tensor sigmoid(const Tensor& a) { return run_unary(sigmoid_stub, a, floating_or_float32(a.scalar_type())); }
Tensor tanh(const Tensor& a) { return run_unary(tanh_stub, a, floating_or_float32(a.scalar_type())); }

void relu_(const Tensor& self) { run_unary_inplace(relu_stub, "relu_", self, self.scalar_type()); }

Tensor relu_backward(const Tensor& grad, const Tensor& result) {
  return run_binary(relu_backward_stub, "relu_backward", grad, result, grad.scalar_type(), grad.scalar_type());
}
Tensor sigmoid_backward(const Tensor& grad, const Tensor& result) {
  return run_binary(sigmoid_backward_stub, "sigmoid_backward", grad, result, grad.scalar_type(), grad.scalar_type());
}
Tensor tanh_backward(const Tensor& grad, const Tensor& result) {
  return run_binary(tanh_backward_stub, "tanh_backward", grad, result, grad.scalar_type(), grad.scalar_type());
}
Tensor pow_scalar_backward(const Tensor& grad, const Tensor& input, const Scalar& exponent) {
  return run_binary(pow_scalar_backward_stub, "pow_backward", grad, input, grad.scalar_type(), grad.scalar_type(),
                    exponent);
}
Tensor abs_backward(const Tensor& grad, const Tensor& input) {
  return run_binary(abs_backward_stub, "abs_backward", grad, input, grad.scalar_type(), grad.scalar_type());
}

}  // namespace gr::native
