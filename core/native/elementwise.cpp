// Element-wise native ops: dtype promotion, broadcasting, output allocation, dispatch.
// The CPU kernels are in elementwise_cpu.cpp.
#include "core/native/elementwise.h"

#include "core/factory.h"
#include "core/native/copy.h"

namespace gr::native {

#define GR_DEFINE_ELEMENTWISE_STUB(name) GR_DEFINE_DISPATCH(ElementwiseFn, name##_stub);
GR_ELEMENTWISE_STUBS(GR_DEFINE_ELEMENTWISE_STUB)
#undef GR_DEFINE_ELEMENTWISE_STUB

namespace {

void check_same_device(const Tensor& a, const Tensor& b, const char* op) {
  GR_CHECK(a.defined() && b.defined(), op, ": undefined tensor argument");
  GR_CHECK(a.device() == b.device(), op, ": expected all tensors on the same device, got ", a.device(), " and ",
           b.device());
}

// bfloat16/float16 are storage types: their math runs in float32 and is rounded back.
ScalarType math_dtype(ScalarType t) { return is_reduced_float(t) ? kFloat32 : t; }

// Output of a binary op: broadcast shape, given dtype, operands converted to `compute`.
Tensor run_binary(const DispatchStub<ElementwiseFn>& stub, const char* op, const Tensor& a, const Tensor& b,
                  ScalarType compute, ScalarType out_dtype, const Scalar& param = 0) {
  check_same_device(a, b, op);
  std::vector<int64_t> shape = broadcast_shapes(a.sizes(), b.sizes(), op);
  const ScalarType math = math_dtype(compute);
  Tensor out = empty(shape, TensorOptions(out_dtype == compute ? math : out_dtype).device(a.device()));
  Tensor ac = to_dtype(a, math), bc = to_dtype(b, math);
  StridedLoop L = make_strided_loop({out, ac, bc}, shape);
  stub(a.device(), L, math, param);
  return to_dtype(out, out_dtype);
}

Tensor run_unary(const DispatchStub<ElementwiseFn>& stub, const Tensor& a, ScalarType compute,
                 const Scalar& param = 0) {
  const ScalarType math = math_dtype(compute);
  Tensor out = empty(a.sizes(), TensorOptions(math).device(a.device()));
  Tensor ac = to_dtype(a, math);
  StridedLoop L = make_strided_loop({out, ac}, a.sizes());
  stub(a.device(), L, math, param);
  return to_dtype(out, compute);
}

// In place: self = f(self, other), computed in self's dtype.
void run_binary_inplace(const DispatchStub<ElementwiseFn>& stub, const char* op, const Tensor& self,
                        const Tensor& other, const Scalar& param = 0) {
  check_same_device(self, other, op);
  std::vector<int64_t> shape = broadcast_shapes(self.sizes(), other.sizes(), op);
  GR_CHECK(IntArrayRef(shape) == self.sizes(), op, ": output with shape ", self.sizes(),
           " doesn't match the broadcast shape ", IntArrayRef(shape));
  ScalarType result = promote_types(self.scalar_type(), other.scalar_type());
  GR_CHECK(!(is_floating_point(result) && !self.is_floating_point()), op, ": result type ", result,
           " can't be cast to the desired output type ", self.scalar_type());
  if (is_reduced_float(self.scalar_type())) {
    copy_(self, run_binary(stub, op, self, other, self.scalar_type(), self.scalar_type(), param));
    return;
  }
  Tensor o = to_dtype(other, self.scalar_type());
  if (o.storage().is_same(self.storage()) && !o.is_same(self)) o = clone(o);
  StridedLoop L = make_strided_loop({self, self, o}, shape);
  stub(self.device(), L, self.scalar_type(), param);
  self.unsafe_impl()->storage.bump_version();
}

ScalarType floating_or_float32(ScalarType t) { return is_floating_point(t) ? t : kFloat32; }

}  // namespace

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

void relu_(const Tensor& self) {
  StridedLoop L = make_strided_loop({self, self}, self.sizes());
  relu_stub(self.device(), L, self.scalar_type(), 0);
  self.unsafe_impl()->storage.bump_version();
}

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
