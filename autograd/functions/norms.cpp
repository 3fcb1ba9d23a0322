// rms_norm, group_norm and instance_norm, composed of differentiable ops: group and instance
// norm run the fused layer_norm kernels on an [N, G, *] / [N, C, *] view and add the
// per-channel affine, so all three have first and second derivatives.
#include <cfloat>
#include <vector>

#include "autograd/autocast.h"
#include "autograd/function.h"
#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "core/native/norm/layer_norm.h"

namespace gr {

namespace {

// torch.finfo(dtype).eps
double machine_eps(ScalarType t) {
  switch (t) {
    case kFloat64: return DBL_EPSILON;
    case kFloat16: return 0.0009765625;
    case kBFloat16: return 0.0078125;
    default: return FLT_EPSILON;
  }
}

// [1, C, 1, ...] for an input [N, C, *].
std::vector<int64_t> channel_shape(const Tensor& input) {
  std::vector<int64_t> s(static_cast<size_t>(input.dim()), 1);
  s[1] = input.size(1);
  return s;
}

void check_channels(const Tensor& t, const Tensor& input, const char* op, const char* name) {
  if (!t.defined()) return;
  GR_CHECK(t.dim() == 1 && t.size(0) == input.size(1), op, ": expected ", name, " of shape [", input.size(1),
           "] (the input's channels), got ", t.sizes(), " for input of shape ", input.sizes());
  GR_CHECK(t.scalar_type() == input.scalar_type() && t.device() == input.device(), op, ": expected ", name, " to be ",
           input.toString(), " like the input, got ", t.toString());
}

Tensor channel_affine(Tensor y, const Tensor& input, const Tensor& weight, const Tensor& bias) {
  const auto shape = channel_shape(input);
  if (weight.defined()) y = y * weight.view(shape);
  if (bias.defined()) y = y + bias.view(shape);
  return y;
}

// Product of the dims from 2 on (1 for [N, C]).
int64_t spatial_size(const Tensor& input) {
  int64_t s = 1;
  for (int64_t d = 2; d < input.dim(); ++d) s *= input.size(d);
  return s;
}

}  // namespace

Tensor rms_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight, std::optional<double> eps) {
  native::layer_norm_sizes(input, normalized_shape, weight, {}, "rms_norm");
  std::vector<int64_t> dims;
  for (int64_t d = input.dim() - static_cast<int64_t>(normalized_shape.size()); d < input.dim(); ++d) dims.push_back(d);
  const double e = eps.value_or(machine_eps(input.scalar_type()));
  Tensor y = input * rsqrt((input * input).mean(dims, true) + e);
  return weight.defined() ? y * weight : y;
}

Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight, const Tensor& bias, double eps,
                  bool cudnn_enabled) {
  GR_AUTOCAST(group_norm, input, num_groups, weight, bias, eps, cudnn_enabled);
  GR_CHECK(input.defined() && input.dim() >= 2, "group_norm: expected input of shape [N, C, *], got ",
           input.defined() ? input.sizes() : IntArrayRef{});
  const int64_t N = input.size(0), C = input.size(1);
  GR_CHECK(num_groups > 0 && C % num_groups == 0,
           "group_norm: expected number of channels in input to be divisible by num_groups, but got input of shape ",
           input.sizes(), " and num_groups=", num_groups);
  check_channels(weight, input, "group_norm", "weight");
  check_channels(bias, input, "group_norm", "bias");
  const int64_t group_size = C / num_groups * spatial_size(input);
  Tensor y = layer_norm(input.reshape({N, num_groups, group_size}), {group_size}, {}, {}, eps).reshape(input.sizes());
  return channel_affine(y, input, weight, bias);
}

Tensor instance_norm(const Tensor& input, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                     const Tensor& running_var, bool use_input_stats, double momentum, double eps,
                     bool /*cudnn_enabled*/) {
  GR_CHECK(input.defined() && input.dim() >= 2, "instance_norm: expected input of shape [N, C, *], got ",
           input.defined() ? input.sizes() : IntArrayRef{});
  check_channels(weight, input, "instance_norm", "weight");
  check_channels(bias, input, "instance_norm", "bias");
  check_channels(running_mean, input, "instance_norm", "running_mean");
  check_channels(running_var, input, "instance_norm", "running_var");
  const int64_t N = input.size(0), C = input.size(1), S = spatial_size(input);
  Tensor y;
  if (use_input_stats) {
    GR_CHECK(S > 1, "instance_norm: expected more than 1 spatial element when training, got input of shape ",
             input.sizes());
    y = layer_norm(input.reshape({N, C, S}), {S}, {}, {}, eps).reshape(input.sizes());
    if (running_mean.defined() || running_var.defined()) {
      // The running statistics average the instances' statistics over N (unbiased variance), as torch.
      NoGradGuard no_grad;
      Tensor x = input.detach().reshape({N, C, S});
      if (running_mean.defined()) running_mean.mul_(1 - momentum).add_(x.mean({2}).mean({0}) * momentum);
      if (running_var.defined()) running_var.mul_(1 - momentum).add_(x.var({2}, true).mean({0}) * momentum);
    }
  } else {
    GR_CHECK(running_mean.defined() && running_var.defined(),
             "instance_norm: expected running_mean and running_var when use_input_stats is false");
    const auto shape = channel_shape(input);
    y = (input - running_mean.view(shape)) * rsqrt(running_var.view(shape) + eps);
  }
  return channel_affine(y, input, weight, bias);
}

}  // namespace gr
