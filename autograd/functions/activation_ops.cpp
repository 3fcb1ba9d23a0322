// The nn breadth activations with backward: gelu (fused native backward for first-order
// passes), silu, mish, leaky_relu, elu/selu, hardtanh/relu6 (clamp) and prelu. Backwards are
// written with gr:: ops, so they differentiate again (Note [Double backward]).
#include <string>

#include "autograd/autocast.h"
#include "autograd/function.h"
#include "autograd/functions/elementwise_grad.h"
#include "core/native/activation/activation.h"

namespace gr {

namespace {
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;

// gelu's derivative with gr:: ops (the functors' formulas of core/native/activation/activation.h).
Tensor gelu_grad(const Tensor& g, const Tensor& x, bool tanh_approx) {
  if (!tanh_approx) {
    Tensor cdf = 0.5 * (1 + erf(x * functors::kSqrt1_2));
    Tensor pdf = exp(-0.5 * x * x) * functors::kInvSqrt2Pi;
    return g * (cdf + x * pdf);
  }
  Tensor t = tanh(functors::kSqrt2OverPi * (x + functors::kGeluKappa * x * x * x));
  Tensor dinner = functors::kSqrt2OverPi * (1 + 3 * functors::kGeluKappa * x * x);
  return g * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * dinner);
}
}  // namespace

// ATen's gelu_backward as a function (benchmarks time the kernel); not differentiable.
Tensor gelu_backward(const Tensor& grad_output, const Tensor& self, std::string_view approximate) {
  return native::gelu_backward(grad_output, self, approximate);
}

Tensor gelu(const Tensor& self, std::string_view approximate) {
  Tensor out = native::gelu(self, approximate);
  const bool tanh_approx = approximate == "tanh";
  return autograd::record_unary("GeluBackward0", self, out, false, [tanh_approx](const Tensor& g, const Tensor& x) {
    if (!autograd::needs_grad(g, x)) return native::gelu_backward(g, x, tanh_approx ? "tanh" : "none");
    return gelu_grad(g, x, tanh_approx);
  });
}

Tensor silu(const Tensor& self) {
  return autograd::record_unary("SiluBackward0", self, native::silu(self), false, [](const Tensor& g, const Tensor& x) {
    Tensor s = sigmoid(x);
    return g * s * (1 + x * (1 - s));
  });
}

Tensor mish(const Tensor& self) {
  return autograd::record_unary("MishBackward0", self, native::mish(self), false, [](const Tensor& g, const Tensor& x) {
    Tensor t = tanh(softplus(x));
    return g * (t + x * sigmoid(x) * (1 - t * t));
  });
}

Tensor leaky_relu(const Tensor& self, const Scalar& negative_slope) {
  return autograd::record_unary("LeakyReluBackward0", self, native::leaky_relu(self, negative_slope), false,
                                [negative_slope](const Tensor& g, const Tensor& x) {
                                  return where(x > 0, g, g * negative_slope);
                                });
}

Tensor elu(const Tensor& self, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale) {
  const double a = alpha.to<double>(), s = scale.to<double>(), is = input_scale.to<double>();
  return autograd::record_unary("EluBackward0", self, native::elu(self, alpha, scale, input_scale), false,
                                [a, s, is](const Tensor& g, const Tensor& x) {
                                  return where(x > 0, g * s, g * (is * a * s) * exp(x * is));
                                });
}

Tensor selu(const Tensor& self) { return elu(self, kSeluAlpha, kSeluScale, 1); }

Tensor hardtanh(const Tensor& self, const Scalar& min_val, const Scalar& max_val) {
  GR_CHECK(self.defined() && self.is_floating_point(), "hardtanh: expected a floating point input, got ",
           self.defined() ? self.toString() : std::string("an undefined tensor"));
  GR_CHECK(min_val.to<double>() <= max_val.to<double>(), "hardtanh: min_val (", min_val.to<double>(),
           ") must be less than or equal to max_val (", max_val.to<double>(), ")");
  return clamp(self, std::optional<Scalar>(min_val), std::optional<Scalar>(max_val));
}

Tensor relu6(const Tensor& self) { return hardtanh(self, 0, 6); }

Tensor prelu(const Tensor& self, const Tensor& weight) {
  GR_AUTOCAST(prelu, self, weight);
  GR_CHECK(self.defined() && weight.defined(), "prelu: undefined tensor argument");
  GR_CHECK(self.is_floating_point() && weight.scalar_type() == self.scalar_type(),
           "prelu: expected input and weight of one floating dtype, got ", self.scalar_type(), " and ",
           weight.scalar_type());
  const int64_t n = weight.numel();
  const int64_t channels = self.dim() >= 2 ? self.size(1) : 1;
  GR_CHECK(weight.dim() <= 1 && (n == 1 || n == channels),
           "prelu: mismatch of parameter numbers and input channel size: found ", n, " parameters (weight of shape ",
           weight.sizes(), ") for input of shape ", self.sizes());
  Tensor w = weight;
  if (n > 1) {  // one slope per channel (dim 1)
    std::vector<int64_t> shape(static_cast<size_t>(self.dim()), 1);
    shape[1] = n;
    w = weight.reshape(shape);
  } else {
    w = weight.reshape({});
  }
  return where(self > 0, self, w * self);
}

}  // namespace gr
