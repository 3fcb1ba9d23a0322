// Element-wise native ops (no autograd): arithmetic with NumPy broadcasting and dtype
// promotion, comparisons, where, unary math, and the fused backward formulas.
#pragma once

#include "core/dispatch.h"
#include "core/native/strided_loop.h"

namespace gr::native {

// A kernel over a loop whose operands (output first) all have dtype `t`, except where
// noted: comparisons write bool, `where` reads a bool condition first.
using ElementwiseFn = void (*)(const StridedLoop&, ScalarType t, const Scalar& param);

#define GR_ELEMENTWISE_STUBS(X) \
  X(add) X(sub) X(mul) X(div) X(pow) X(maximum) X(minimum) \
  X(eq) X(ne) X(gt) X(lt) X(ge) X(le) X(where) \
  X(neg) X(exp) X(log) X(sqrt) X(abs) X(relu) X(sigmoid) X(tanh) X(pow_scalar) \
  X(relu_backward) X(sigmoid_backward) X(tanh_backward) X(pow_scalar_backward) X(abs_backward)
#define GR_DECLARE_ELEMENTWISE_STUB(name) GR_DECLARE_DISPATCH(ElementwiseFn, name##_stub);
GR_ELEMENTWISE_STUBS(GR_DECLARE_ELEMENTWISE_STUB)
#undef GR_DECLARE_ELEMENTWISE_STUB

// A 0-d tensor holding `s` in the dtype an op between `like` and `s` computes in.
Tensor wrapped_scalar(const Tensor& like, const Scalar& s);

// ---- binary, out of place ----
Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);  // true division: integers give float32
Tensor pow(const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& a, const Scalar& exponent);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);

// ---- binary, in place on self (other broadcasts to self's shape) ----
void add_(const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
void sub_(const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
void mul_(const Tensor& self, const Tensor& other);
void div_(const Tensor& self, const Tensor& other);

// ---- comparisons (bool) and selection ----
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);

// ---- unary ----
Tensor neg(const Tensor& a);
Tensor exp(const Tensor& a);
Tensor log(const Tensor& a);
Tensor sqrt(const Tensor& a);
Tensor abs(const Tensor& a);
Tensor relu(const Tensor& a);
Tensor sigmoid(const Tensor& a);
Tensor tanh(const Tensor& a);
void relu_(const Tensor& self);

// ---- fused backward formulas ----
Tensor relu_backward(const Tensor& grad, const Tensor& result);
Tensor sigmoid_backward(const Tensor& grad, const Tensor& result);
Tensor tanh_backward(const Tensor& grad, const Tensor& result);
Tensor pow_scalar_backward(const Tensor& grad, const Tensor& input, const Scalar& exponent);
Tensor abs_backward(const Tensor& grad, const Tensor& input);

}  // namespace gr::native
