// sin, cos, tan, asin, acos, atan, sinh, cosh (out of place and in place) with backward.
#include "autograd/functions/elementwise_grad.h"
#include "core/native/elementwise_math.h"

namespace gr {

GR_DEFINE_UNARY_OP(sin, "SinBackward0", false, g * cos(s))
GR_DEFINE_UNARY_OP(cos, "CosBackward0", false, g * -sin(s))
GR_DEFINE_UNARY_OP(tan, "TanBackward0", true, g * (1 + square(s)))  // s = tan x
GR_DEFINE_UNARY_OP(asin, "AsinBackward0", false, g * rsqrt(1 - square(s)))
GR_DEFINE_UNARY_OP(acos, "AcosBackward0", false, g * -rsqrt(1 - square(s)))
GR_DEFINE_UNARY_OP(atan, "AtanBackward0", false, g / (1 + square(s)))
GR_DEFINE_UNARY_OP(sinh, "SinhBackward0", false, g * cosh(s))
GR_DEFINE_UNARY_OP(cosh, "CoshBackward0", false, g * sinh(s))

}  // namespace gr
