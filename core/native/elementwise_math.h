// Element-wise native ops of the math and comparison families (no autograd): trigonometry,
// special functions, rounding, modulo, clamp, lerp, softplus; logical, bitwise and
// classification ops; isclose. dtypes as PyTorch's (see each group). CPU kernels in
// elementwise_math_cpu.cpp, CUDA kernels in cuda_kernels/math_ops.cu.
#pragma once

#include <optional>

#include "core/native/elementwise.h"

namespace gr::native {

// Kernels with two scalar parameters (softplus: beta, threshold; clamp: min, max).
using Elementwise2Fn = void (*)(const StridedLoop&, ScalarType t, const Scalar& p0, const Scalar& p1);

// Unary float math: integer and bool inputs compute in float32.
#define GR_UNARY_FLOAT_MATH(X) \
  X(sin) X(cos) X(tan) X(asin) X(acos) X(atan) X(sinh) X(cosh) X(erf) X(erfc) X(erfinv) \
  X(rsqrt) X(reciprocal) X(log1p) X(expm1) X(log2) X(log10)
// Unary ops that keep the dtype: square (bool gives int64), sign (bool too), floor, ceil,
// round, trunc (identity on integers, not for bool), frac (floats only).
#define GR_UNARY_KEEP_MATH(X) X(square) X(sign) X(floor) X(ceil) X(round) X(trunc) X(frac)

// Every ElementwiseFn stub of this family (the dispatch-coverage test walks the list).
#define GR_MATH_STUBS(X) \
  GR_UNARY_FLOAT_MATH(X) GR_UNARY_KEEP_MATH(X) \
  X(round_decimals) X(clamp_min_scalar) X(clamp_max_scalar) \
  X(atan2) X(fmod) X(remainder) X(hypot) X(lerp_scalar) X(lerp) X(clamp) \
  X(logical_and) X(logical_or) X(logical_xor) X(logical_not) \
  X(bitwise_and) X(bitwise_or) X(bitwise_xor) X(bitwise_not) \
  X(isnan) X(isinf) X(isfinite)
#define GR_MATH_STUBS2(X) X(softplus) X(clamp_scalar)
using IsCloseFn = void (*)(const StridedLoop&, ScalarType t, double rtol, double atol, bool equal_nan);
GR_DECLARE_DISPATCH(IsCloseFn, isclose_stub);
#define GR_DECLARE_MATH_STUB(name) GR_DECLARE_DISPATCH(ElementwiseFn, name##_stub);
#define GR_DECLARE_MATH_STUB2(name) GR_DECLARE_DISPATCH(Elementwise2Fn, name##_stub);
GR_MATH_STUBS(GR_DECLARE_MATH_STUB)
GR_MATH_STUBS2(GR_DECLARE_MATH_STUB2)
#undef GR_DECLARE_MATH_STUB
#undef GR_DECLARE_MATH_STUB2

// ---- unary, out of place and in place (the in-place forms fail where the result dtype
// can't be written into self's, as torch's) ----
#define GR_DECLARE_UNARY_MATH(name) \
  Tensor name(const Tensor& a);     \
  void name##_(const Tensor& self);
GR_UNARY_FLOAT_MATH(GR_DECLARE_UNARY_MATH)
GR_UNARY_KEEP_MATH(GR_DECLARE_UNARY_MATH)
#undef GR_DECLARE_UNARY_MATH
// In-place forms of the unary ops of elementwise.h.
void neg_(const Tensor& self);
void exp_(const Tensor& self);
void log_(const Tensor& self);
void sqrt_(const Tensor& self);
void abs_(const Tensor& self);
void sigmoid_(const Tensor& self);
void tanh_(const Tensor& self);
// Rounded to `decimals` digits after the point (before it when negative); floats only.
Tensor round(const Tensor& a, int64_t decimals);
void round_(const Tensor& self, int64_t decimals);
Tensor softplus(const Tensor& a, const Scalar& beta = 1, const Scalar& threshold = 20);

// ---- binary: atan2 and hypot compute in a float dtype (hypot: floats only); fmod and
// remainder promote (integers fail on a zero divisor); lerp takes three tensors of one float
// dtype ----
Tensor atan2(const Tensor& a, const Tensor& b);
Tensor hypot(const Tensor& a, const Tensor& b);
Tensor fmod(const Tensor& a, const Tensor& b);
Tensor remainder(const Tensor& a, const Tensor& b);
Tensor lerp(const Tensor& start, const Tensor& end, const Scalar& weight);
Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight);
void atan2_(const Tensor& self, const Tensor& other);
void hypot_(const Tensor& self, const Tensor& other);
void fmod_(const Tensor& self, const Tensor& other);
void remainder_(const Tensor& self, const Tensor& other);
void lerp_(const Tensor& self, const Tensor& end, const Scalar& weight);
void lerp_(const Tensor& self, const Tensor& end, const Tensor& weight);

// ---- clamp: the result dtype promotes self with the bounds (scalars as wrapped numbers) ----
Tensor clamp(const Tensor& a, const std::optional<Scalar>& min, const std::optional<Scalar>& max);
Tensor clamp(const Tensor& a, const std::optional<Tensor>& min, const std::optional<Tensor>& max);
void clamp_(const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max);
void clamp_(const Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max);

// ---- logical (any dtypes in, bool out), bitwise (bool and integers), classification ----
Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_or(const Tensor& a, const Tensor& b);
Tensor logical_xor(const Tensor& a, const Tensor& b);
Tensor logical_not(const Tensor& a);
Tensor bitwise_and(const Tensor& a, const Tensor& b);
Tensor bitwise_or(const Tensor& a, const Tensor& b);
Tensor bitwise_xor(const Tensor& a, const Tensor& b);
Tensor bitwise_not(const Tensor& a);
void bitwise_and_(const Tensor& self, const Tensor& other);
void bitwise_or_(const Tensor& self, const Tensor& other);
void bitwise_xor_(const Tensor& self, const Tensor& other);
void bitwise_not_(const Tensor& self);
Tensor isnan(const Tensor& a);
Tensor isinf(const Tensor& a);
Tensor isfinite(const Tensor& a);
// |a - b| <= atol + rtol * |b| element-wise (broadcast; one dtype), as torch.isclose.
Tensor isclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false);

}  // namespace gr::native
