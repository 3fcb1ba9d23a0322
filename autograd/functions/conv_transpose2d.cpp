// conv_transpose2d and conv_transpose1d (unit height) with backward, made of conv2d's pieces
// (Note [Transposed convolution] in core/native/conv/conv2d.h): the forward is the convolution's
// input gradient, the input's gradient is the convolution, the weight's its weight gradient,
// all differentiable again (Note [Conv2d double backward]).
#include "autograd/autocast.h"
#include "autograd/function.h"
#include "autograd/functions/conv2d.h"
#include "autograd/ops.h"
#include "core/factory.h"
#include "core/native/elementwise/elementwise.h"

namespace gr {

namespace {

// x with zero rows and columns appended up to the convolution's output size, which exceeds
// x's when output_padding reaches past the stride (see the Note).
Tensor pad_to_output(const native::Conv2dArgs& a, Tensor x) {
  for (int64_t d : {2, 3}) {
    std::vector<int64_t> extra = x.sizes().vec();
    extra[d] = (d == 2 ? a.H_out : a.W_out) - x.size(d);
    if (extra[d] > 0) x = cat({x, zeros(extra, x.options())}, d);
  }
  return x;
}

Tensor conv_transpose(const native::Conv2dArgs& a, const Tensor& input, const Tensor& weight, const Tensor& bias) {
  const Tensor x = pad_to_output(a, input);
  Tensor out = std::get<0>(native::conv2d_backward(a, x, {}, weight, {true, false, false}));
  if (bias.defined()) native::add_(out, bias.view({1, -1, 1, 1}));
  if (autograd::needs_grad(x, weight, bias)) {
    autograd::SavedTensor sx(weight.requires_grad() ? x : Tensor()), sw(x.requires_grad() ? weight : Tensor());
    autograd::record("ConvolutionBackward0", {x, weight, bias}, {out},
                     [a, sx, sw](const TensorList& g, const std::vector<bool>& needs) {
                       return TensorList{needs[0] ? autograd::conv2d(a, g[0], sw.unpack(), {}) : Tensor(),
                                         needs[1] ? autograd::conv2d_weight_grad(a, g[0], sx.unpack()) : Tensor(),
                                         needs.size() > 2 && needs[2] ? gr::sum(g[0], {0, 2, 3}) : Tensor()};
                     });
  }
  return out;
}

}  // namespace

Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                        IntArrayRef padding, IntArrayRef output_padding, int64_t groups, IntArrayRef dilation) {
  GR_AUTOCAST(conv_transpose2d, input, weight, bias, stride, padding, output_padding, groups, dilation);
  return conv_transpose(
      native::conv_transpose2d_args(input, weight, bias, stride, padding, output_padding, groups, dilation), input,
      weight, bias);
}

Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                        IntArrayRef padding, IntArrayRef output_padding, int64_t groups, IntArrayRef dilation) {
  GR_AUTOCAST(conv_transpose1d, input, weight, bias, stride, padding, output_padding, groups, dilation);
  const native::Conv2dArgs a =
      native::conv_transpose1d_args(input, weight, bias, stride, padding, output_padding, groups, dilation);
  return conv_transpose(a, input.unsqueeze(2), weight.unsqueeze(2), bias).squeeze(2);
}

}  // namespace gr
