// Element-wise native ops of the math and comparison families (no autograd): trigonometry,
// special functions, rounding, binary float math, modulo, clamp, lerp, softplus; logical,
// bitwise and classification ops; isclose. dtypes as PyTorch's (see math_ops.def and each
// group). CPU kernels in elementwise_math_cpu.cpp, CUDA kernels in cuda_kernels/math_ops.cu.
// In-place forms fail where the result dtype can't be written into self's, as torch's.
#pragma once

#include <optional>

#include "core/native/elementwise/elementwise.h"

namespace gr::native {

// Kernels with two scalar parameters (softplus: beta, threshold; clamp: min, max).
using Elementwise2Fn = void (*)(const StridedLoop&, ScalarType t, const Scalar& p0, const Scalar& p1);

using IsCloseFn = void (*)(const StridedLoop&, ScalarType t, double rtol, double atol, bool equal_nan);

// Every stub of the family, and the native op of each element-wise line (dtypes as the list
// says), read from core/native/math_ops.def.
#define GR_MATH_KERNEL(stub, fn_type, kernel) GR_DECLARE_DISPATCH(fn_type, stub##_stub);
#include "core/native/elementwise/math_ops.def"
#define GR_UNARY_OP(name, F, dtypes, node, domain) \
  Tensor name(const Tensor& a);                    \
  void name##_(const Tensor& self);
#define GR_BINARY_OP(name, F, dtypes, node, domain) \
  Tensor name(const Tensor& a, const Tensor& b);    \
  void name##_(const Tensor& self, const Tensor& other);
#include "core/native/elementwise/math_ops.def"

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

// ---- fmod and remainder promote (integers fail on a zero divisor); lerp takes three tensors
// of one float dtype ----
Tensor fmod(const Tensor& a, const Tensor& b);
Tensor remainder(const Tensor& a, const Tensor& b);
Tensor lerp(const Tensor& start, const Tensor& end, const Scalar& weight);
Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight);
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
