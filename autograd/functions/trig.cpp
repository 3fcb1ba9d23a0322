// sin, cos, tan, asin, acos, atan, sinh, cosh (out of place and in place) with backward.
#include "autograd/functions/elementwise_grad.h"
#include "core/native/elementwise_math.h"

namespace gr {

GR_DEFINE_UNARY_OP(sin, "SinBackward", false, g * cos(s))
GR_DEFINE_UNARY_OP(cos, "CosBackward", false, g * -sin(s))
GR_DEFINE_UNARY_OP(tan, "TanBackward", true, g * (1 + square(s)))  // s = tan x
GR_DEFINE_UNARY_OP(asin, "AsinBackward", false, g * rsqrt(1 - square(s)))
GR_DEFINE_UNARY_OP(acos, "AcosBackward", false, g * -rsqrt(1 - square(s)))
GR_DEFINE_UNARY_OP(atan, "AtanBackward", false, g / (1 + square(s)))
GR_DEFINE_UNARY_OP(sinh, "SinhBackward", false, g * cosh(s))
GR_DEFINE_UNARY_OP(cosh, "CoshBackward", false, g * sinh(s))

}  // namespace gr
