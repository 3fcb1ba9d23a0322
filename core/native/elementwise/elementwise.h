// Element-wise native ops (no autograd): arithmetic with NumPy broadcasting and dtype
// promotion, comparisons, where, unary math, and the fused backward formulas.
#pragma once

#include "core/dispatch.h"
#include "core/native/elementwise/strided_loop.h"

namespace gr::native {

// A kernel over a loop whose operands (output first) all have dtype `t`, except where
// noted: comparisons write bool, `where` reads a bool condition first.
using ElementwiseFn = void (*)(const StridedLoop&, ScalarType t, const Scalar& param);

// The family's stubs, from its list.
#define GR_ELEMENTWISE_KERNEL(stub, kind, F) GR_DECLARE_DISPATCH(ElementwiseFn, stub##_stub);
#include "core/native/elementwise/elementwise_ops.def"

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
