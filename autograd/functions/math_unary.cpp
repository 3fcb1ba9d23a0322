// The math family's one-input ops (the GR_UNARY_OP lines of core/native/elementwise/math_ops.def): each
// backward formula here, then the ops themselves, out of place and in place, read from the
// list (Note [Element-wise formulas]); softplus and round(decimals) written out.
#include <math.h>

#include "autograd/functions/elementwise_grad.h"
#include "core/native/elementwise/elementwise_math.h"

namespace gr {

namespace {
constexpr double kTwoOverSqrtPi = 1.1283791670955126;  // d/dx erf(x) = 2/sqrt(pi) exp(-x^2)
constexpr double kHalfSqrtPi = 0.88622692545275801;    // d/dy erfinv(y) = sqrt(pi)/2 exp(erfinv(y)^2)
}  // namespace

// s is the saved input, or the saved output where the formula reads better with it.
GR_UNARY_GRAD(sin, input, g * cos(s))
GR_UNARY_GRAD(cos, input, g * -sin(s))
GR_UNARY_GRAD(tan, output, g * (1 + square(s)))  // s = tan x
GR_UNARY_GRAD(asin, input, g * rsqrt(1 - square(s)))
GR_UNARY_GRAD(acos, input, g * -rsqrt(1 - square(s)))
GR_UNARY_GRAD(atan, input, g / (1 + square(s)))
GR_UNARY_GRAD(sinh, input, g * cosh(s))
GR_UNARY_GRAD(cosh, input, g * sinh(s))
GR_UNARY_GRAD(erf, input, g * (kTwoOverSqrtPi * exp(-square(s))))
GR_UNARY_GRAD(erfc, input, g * (-kTwoOverSqrtPi * exp(-square(s))))
GR_UNARY_GRAD(erfinv, output, g * (kHalfSqrtPi * exp(square(s))))  // s = erfinv y
GR_UNARY_GRAD(rsqrt, output, g * (-0.5 * s * square(s)))  // s = x^-1/2
GR_UNARY_GRAD(reciprocal, output, g * -square(s))         // s = 1/x
GR_UNARY_GRAD(log1p, input, g / (s + 1))
GR_UNARY_GRAD(expm1, output, g * (s + 1))  // s = exp(x) - 1
GR_UNARY_GRAD(log2, input, g / (s * M_LN2))
GR_UNARY_GRAD(log10, input, g / (s * M_LN10))
GR_UNARY_GRAD(square, input, g * (2 * s))
// The rounding ops are piecewise constant: their gradient is zero, as torch's.
GR_UNARY_GRAD(sign, nothing, autograd::zero_grad_like(g))
GR_UNARY_GRAD(floor, nothing, autograd::zero_grad_like(g))
GR_UNARY_GRAD(ceil, nothing, autograd::zero_grad_like(g))
GR_UNARY_GRAD(round, nothing, autograd::zero_grad_like(g))
GR_UNARY_GRAD(trunc, nothing, autograd::zero_grad_like(g))
GR_UNARY_GRAD(frac, input, g)

#define GR_UNARY_OP(name, F, dtypes, node, domain)                                                                    \
  Tensor name(const Tensor& self) {                                                                                   \
    return autograd::record_unary(node, self, native::name(self), name##_saves, name##_grad);                        \
  }                                                                                                                   \
  Tensor& Tensor::name##_() const {                                                                                   \
    return autograd::record_unary_(node, #name "_", *this, [this] { native::name##_(*this); }, name##_saves,         \
                                   name##_grad);                                                                      \
  }
#include "core/native/elementwise/math_ops.def"

Tensor round(const Tensor& self, int64_t decimals) {
  return autograd::record_unary("RoundBackward1", self, native::round(self, decimals), autograd::UnarySaves::nothing,
                                round_grad);
}
Tensor& Tensor::round_(int64_t decimals) const {
  return autograd::record_unary_("RoundBackward1", "round_", *this, [this, decimals] { native::round_(*this, decimals); },
                                 autograd::UnarySaves::nothing, round_grad);
}

// Where beta x > threshold the op is the identity; elsewhere the slope is sigmoid(beta x).
Tensor softplus(const Tensor& self, const Scalar& beta, const Scalar& threshold) {
  return autograd::record_unary("SoftplusBackward0", self, native::softplus(self, beta, threshold), false,
                                [beta, threshold](const Tensor& g, const Tensor& x) {
                                  Tensor z = x * beta;
                                  return where(z > threshold, g, g * sigmoid(z));
                                });
}

}  // namespace gr
