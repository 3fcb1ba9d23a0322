// erf, erfc, erfinv, log1p, expm1, log2, log10, rsqrt, reciprocal, square (out of place and
// in place) and softplus with backward.
#include <math.h>

#include "autograd/functions/elementwise_grad.h"
#include "core/native/elementwise_math.h"

namespace gr {

namespace {
constexpr double kTwoOverSqrtPi = 1.1283791670955126;  // d/dx erf(x) = 2/sqrt(pi) exp(-x^2)
constexpr double kHalfSqrtPi = 0.88622692545275801;    // d/dy erfinv(y) = sqrt(pi)/2 exp(erfinv(y)^2)
}  // namespace

GR_DEFINE_UNARY_OP(erf, "ErfBackward0", false, g * (kTwoOverSqrtPi * exp(-square(s))))
GR_DEFINE_UNARY_OP(erfc, "ErfcBackward0", false, g * (-kTwoOverSqrtPi * exp(-square(s))))
GR_DEFINE_UNARY_OP(erfinv, "ErfinvBackward0", true, g * (kHalfSqrtPi * exp(square(s))))  // s = erfinv y
GR_DEFINE_UNARY_OP(log1p, "Log1PBackward0", false, g / (s + 1))
GR_DEFINE_UNARY_OP(expm1, "Expm1Backward0", true, g * (s + 1))  // s = exp(x) - 1
GR_DEFINE_UNARY_OP(log2, "Log2Backward0", false, g / (s * M_LN2))
GR_DEFINE_UNARY_OP(log10, "Log10Backward0", false, g / (s * M_LN10))
GR_DEFINE_UNARY_OP(rsqrt, "RsqrtBackward0", true, g * (-0.5 * s * square(s)))  // s = x^-1/2
GR_DEFINE_UNARY_OP(reciprocal, "ReciprocalBackward0", true, g * -square(s))   // s = 1/x
GR_DEFINE_UNARY_OP(square, "SquareBackward0", false, g * (2 * s))

// Where beta x > threshold the op is the identity; elsewhere the slope is sigmoid(beta x).
Tensor softplus(const Tensor& self, const Scalar& beta, const Scalar& threshold) {
  return autograd::record_unary("SoftplusBackward0", self, native::softplus(self, beta, threshold), false,
                                [beta, threshold](const Tensor& g, const Tensor& x) {
                                  Tensor z = x * beta;
                                  return where(z > threshold, g, g * sigmoid(z));
                                });
}

}  // namespace gr
