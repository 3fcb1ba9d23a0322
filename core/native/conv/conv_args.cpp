// The argument checks of conv1d, conv2d, conv_transpose1d and conv_transpose2d: each turns
// its tensors and lists into the Conv2dArgs of one 2-D convolution (see Note [Transposed
// convolution] in conv2d.h), or throws gr::Error naming the op and the caller's shapes.
#include "core/native/conv/conv2d.h"

namespace gr::native {

namespace {

// Which op is asking: its name for messages, its spatial dims (1: a unit height) and kind.
struct ConvOp {
  const char* name;
  int64_t dims;
  bool transposed;
};

// A per-dim argument as (height, width) values: 2-D ops take 1 or 2 values, 1-D ops exactly
// one (the unit height gets `unit`).
std::array<int64_t, 2> spatial_arg(const ConvOp& op, IntArrayRef v, const char* what, int64_t unit) {
  if (op.dims == 1) {
    GR_CHECK(v.size() == 1, op.name, ": ", what, " must have 1 value, got ", v);
    return {unit, v[0]};
  }
  GR_CHECK(v.size() == 1 || v.size() == 2, op.name, ": ", what, " must have 1 or 2 values, got ", v);
  return {v[0], v[v.size() - 1]};
}

void check_tensors(const ConvOp& op, const Tensor& input, const Tensor& weight, const Tensor& bias) {
  const char* in_layout = op.dims == 1 ? "[N, C_in, L]" : "[N, C_in, H, W]";
  const char* w_layout = op.transposed ? (op.dims == 1 ? "[C_in, C_out / groups, k]" : "[C_in, C_out / groups, kH, kW]")
                                       : (op.dims == 1 ? "[C_out, C_in / groups, k]" : "[C_out, C_in / groups, kH, kW]");
  GR_CHECK(input.defined() && weight.defined(), op.name, ": input and weight must be defined tensors");
  GR_CHECK(input.dim() == op.dims + 2, op.name, ": expected a ", op.dims + 2, "-D input ", in_layout, ", got ",
           input.sizes());
  GR_CHECK(weight.dim() == op.dims + 2, op.name, ": expected a ", op.dims + 2, "-D weight ", w_layout, ", got ",
           weight.sizes());
  GR_CHECK(input.is_floating_point(), op.name, ": expected a float32 or float64 input, got ", input.scalar_type());
  GR_CHECK(weight.scalar_type() == input.scalar_type(), op.name, ": input is ", input.scalar_type(), " but weight is ",
           weight.scalar_type(), "; they must have the same dtype");
  GR_CHECK(weight.device() == input.device(), op.name, ": input is on ", input.device(), " but weight is on ",
           weight.device());
  if (!bias.defined()) return;
  GR_CHECK(bias.scalar_type() == input.scalar_type(), op.name, ": input is ", input.scalar_type(), " but bias is ",
           bias.scalar_type());
  GR_CHECK(bias.device() == input.device(), op.name, ": input is on ", input.device(), " but bias is on ",
           bias.device());
}

Conv2dArgs conv_args(const ConvOp& op, const Tensor& input, const Tensor& weight, const Tensor& bias,
                     IntArrayRef stride, IntArrayRef padding, IntArrayRef output_padding, IntArrayRef dilation,
                     int64_t groups) {
  check_tensors(op, input, weight, bias);
  const auto [sh, sw] = spatial_arg(op, stride, "stride", 1);
  const auto [ph, pw] = spatial_arg(op, padding, "padding", 0);
  const auto [oph, opw] = spatial_arg(op, output_padding, "output_padding", 0);
  const auto [dh, dw] = spatial_arg(op, dilation, "dilation", 1);
  GR_CHECK(sh >= 1 && sw >= 1, op.name, ": stride must be positive, got ", stride);
  GR_CHECK(ph >= 0 && pw >= 0, op.name, ": padding must be non-negative, got ", padding);
  GR_CHECK(dh >= 1 && dw >= 1, op.name, ": dilation must be positive, got ", dilation);
  GR_CHECK(groups >= 1, op.name, ": groups must be positive, got ", groups);
  // The op's own channel counts, and the spatial sizes with a unit height for 1-D.
  const int64_t C_in = input.size(1), C_out = op.transposed ? weight.size(1) * groups : weight.size(0);
  const int64_t H = op.dims == 1 ? 1 : input.size(2), W = input.size(-1);
  const int64_t kH = op.dims == 1 ? 1 : weight.size(2), kW = weight.size(-1);
  if (bias.defined())
    GR_CHECK(bias.dim() == 1 && bias.size(0) == C_out, op.name, ": bias must be 1-D with C_out = ", C_out,
             " elements (weight ", weight.sizes(), ", groups=", groups, "), got ", bias.sizes());
  GR_CHECK(C_in % groups == 0, op.name, ": groups=", groups, " must divide the input's ", C_in, " channels (input ",
           input.sizes(), ")");
  if (op.transposed) {
    GR_CHECK(weight.size(0) == C_in, op.name, ": input ", input.sizes(), " has ", C_in, " channels, but weight ",
             weight.sizes(), " expects ", weight.size(0), " (a transposed convolution's weight is ",
             op.dims == 1 ? "[C_in, C_out / groups, k])" : "[C_in, C_out / groups, kH, kW])");
  } else {
    GR_CHECK(C_out % groups == 0, op.name, ": groups=", groups, " must divide the ", C_out, " output channels (weight ",
             weight.sizes(), ")");
    GR_CHECK(weight.size(1) * groups == C_in, op.name, ": input ", input.sizes(), " has ", C_in,
             " channels, but weight ", weight.sizes(), " with groups=", groups, " expects ", weight.size(1) * groups);
  }
  GR_CHECK(kH >= 1 && kW >= 1, op.name, ": kernel size must be positive, got weight ", weight.sizes());
  const int64_t ekh = dh * (kH - 1) + 1, ekw = dw * (kW - 1) + 1;
  Conv2dArgs a;
  a.N = input.size(0), a.kH = kH, a.kW = kW, a.groups = groups;
  a.stride_h = sh, a.stride_w = sw, a.pad_h = ph, a.pad_w = pw, a.dil_h = dh, a.dil_w = dw;
  if (!op.transposed) {
    GR_CHECK(oph == 0 && opw == 0, op.name, ": output_padding is for transposed convolutions only");
    GR_CHECK(ekh <= H + 2 * ph && ekw <= W + 2 * pw, op.name, ": kernel size ",
             op.dims == 1 ? "" : std::to_string(ekh) + "x", ekw, (dh > 1 || dw > 1) ? " (dilated)" : "",
             " is larger than the padded input ", op.dims == 1 ? "" : std::to_string(H + 2 * ph) + "x", W + 2 * pw,
             " (input ", input.sizes(), ", weight ", weight.sizes(), ", padding ", padding, ")");
    a.C_in = C_in, a.H = H, a.W = W, a.C_out = C_out;
    a.H_out = (H + 2 * ph - ekh) / sh + 1;
    a.W_out = (W + 2 * pw - ekw) / sw + 1;
    return a;
  }
  // As PyTorch: output_padding must be below the stride or the dilation, else it would add
  // rows no input reaches.
  GR_CHECK(oph >= 0 && opw >= 0 && (oph < sh || oph < dh) && (opw < sw || opw < dw), op.name,
           ": output_padding must be smaller than either stride or dilation, got output_padding ", output_padding,
           ", stride ", stride, ", dilation ", dilation);
  GR_CHECK(H >= 1 && W >= 1, op.name, ": expected an input with non-empty spatial dims, got ", input.sizes());
  const int64_t out_h = (H - 1) * sh - 2 * ph + ekh + oph, out_w = (W - 1) * sw - 2 * pw + ekw + opw;
  GR_CHECK(out_h >= 1 && out_w >= 1, op.name, ": the output size ", op.dims == 1 ? "" : std::to_string(out_h) + "x",
           out_w, " is too small (input ", input.sizes(), ", weight ", weight.sizes(), ", stride ", stride,
           ", padding ", padding, ")");
  // The convolution whose input gradient this is (Note [Transposed convolution]): its input
  // is our output, its output our input, plus output_padding / stride more rows and columns
  // when output_padding reaches past the stride (the caller pads the input to that).
  a.C_in = C_out, a.H = out_h, a.W = out_w, a.C_out = C_in;
  a.H_out = H + oph / sh;
  a.W_out = W + opw / sw;
  return a;
}

}  // namespace

Conv2dArgs conv2d_args(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                       IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  return conv_args({"conv2d", 2, false}, input, weight, bias, stride, padding, 0, dilation, groups);
}

Conv2dArgs conv1d_args(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                       IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  return conv_args({"conv1d", 1, false}, input, weight, bias, stride, padding, 0, dilation, groups);
}

Conv2dArgs conv_transpose2d_args(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                                 IntArrayRef padding, IntArrayRef output_padding, int64_t groups,
                                 IntArrayRef dilation) {
  return conv_args({"conv_transpose2d", 2, true}, input, weight, bias, stride, padding, output_padding, dilation,
                   groups);
}

Conv2dArgs conv_transpose1d_args(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                                 IntArrayRef padding, IntArrayRef output_padding, int64_t groups,
                                 IntArrayRef dilation) {
  return conv_args({"conv_transpose1d", 1, true}, input, weight, bias, stride, padding, output_padding, dilation,
                   groups);
}

}  // namespace gr::native
