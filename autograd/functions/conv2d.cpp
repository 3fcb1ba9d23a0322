// conv2d (and conv1d, over a unit height) with backward: the kernels of core/native/conv/conv2d.h,
// input saved only when the weight wants a gradient and weight only when the input does.
// See Note [Conv2d double backward]. Also ATen's convolution_backward, the fused gradients.
#include "autograd/functions/conv2d.h"

#include "autograd/autocast.h"
#include "autograd/function.h"
#include "autograd/ops.h"

namespace gr::autograd {

// Note [Conv2d double backward]
// conv2d's gradients are two more bilinear ops of the same convolution `a`: the input
// gradient conv2d_input_grad(g, w) (a transposed convolution) and the weight gradient
// conv2d_weight_grad(x, g). All three are faces of one trilinear form <conv2d(x, w), g>, so
// each one's derivatives are the other two:
//   input_grad(g, w), upstream h (input-shaped):  dg = conv2d(h, w),  dw = weight_grad(h, g)
//   weight_grad(x, g), upstream h (weight-shaped): dx = input_grad(g, h), dg = conv2d(x, h)
// and conv2d is differentiable to any order (WGAN-GP penalties through conv layers). The
// first-order path is untouched: with nothing requiring grad (no create_graph) conv2d's
// backward is one fused native::conv2d_backward call, as before.
Tensor conv2d_input_grad(const native::Conv2dArgs& a, const Tensor& g, const Tensor& w) {
  Tensor out = std::get<0>(native::conv2d_backward(a, g, {}, w, {true, false, false}));
  if (autograd::needs_grad(g, w)) {
    SavedTensor sg(w.requires_grad() ? g : Tensor()), sw(g.requires_grad() ? w : Tensor());
    record("Conv2dInputGradBackward", {g, w}, {out}, [a, sg, sw](const TensorList& h, const std::vector<bool>& needs) {
      return TensorList{needs[0] ? autograd::conv2d(a, h[0], sw.unpack(), {}) : Tensor(),
                        needs[1] ? conv2d_weight_grad(a, h[0], sg.unpack()) : Tensor()};
    });
  }
  return out;
}

Tensor conv2d_weight_grad(const native::Conv2dArgs& a, const Tensor& x, const Tensor& g) {
  Tensor out = std::get<1>(native::conv2d_backward(a, g, x, {}, {false, true, false}));
  if (autograd::needs_grad(x, g)) {
    SavedTensor sx(g.requires_grad() ? x : Tensor()), sg(x.requires_grad() ? g : Tensor());
    record("Conv2dWeightGradBackward", {x, g}, {out}, [a, sx, sg](const TensorList& h, const std::vector<bool>& needs) {
      return TensorList{needs[0] ? conv2d_input_grad(a, sg.unpack(), h[0]) : Tensor(),
                        needs[1] ? autograd::conv2d(a, sx.unpack(), h[0], {}) : Tensor()};
    });
  }
  return out;
}

Tensor conv2d(const native::Conv2dArgs& args, const Tensor& input, const Tensor& weight, const Tensor& bias) {
  Tensor out = native::conv2d(args, input, weight, bias);
  if (autograd::needs_grad(input, weight, bias)) {
    SavedTensor si(weight.requires_grad() ? input : Tensor()), sw(input.requires_grad() ? weight : Tensor());
    record("ConvolutionBackward0", {input, weight, bias}, {out},
           [si, sw, args](const TensorList& g, const std::vector<bool>& needs) {
             const bool need_bias = needs.size() > 2 && needs[2];
             Tensor x = needs[1] ? si.unpack() : Tensor(), w = needs[0] ? sw.unpack() : Tensor();
             if (!autograd::needs_grad(g[0], x, w)) {
               auto [gi, gw, gb] = native::conv2d_backward(args, g[0], x, w, {needs[0], needs[1], need_bias});
               return TensorList{gi, gw, gb};
             }
             return TensorList{needs[0] ? conv2d_input_grad(args, g[0], w) : Tensor(),
                               needs[1] ? conv2d_weight_grad(args, x, g[0]) : Tensor(),
                               need_bias ? gr::sum(g[0], {0, 2, 3}) : Tensor()};
           });
  }
  return out;
}

}  // namespace gr::autograd

namespace gr {

Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride, IntArrayRef padding,
              IntArrayRef dilation, int64_t groups) {
  GR_AUTOCAST(conv2d, input, weight, bias, stride, padding, dilation, groups);
  return autograd::conv2d(native::conv2d_args(input, weight, bias, stride, padding, dilation, groups), input, weight,
                          bias);
}

// A 1-D convolution is the 2-D one over a unit height.
Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride, IntArrayRef padding,
              IntArrayRef dilation, int64_t groups) {
  GR_AUTOCAST(conv1d, input, weight, bias, stride, padding, dilation, groups);
  const native::Conv2dArgs a = native::conv1d_args(input, weight, bias, stride, padding, dilation, groups);
  return autograd::conv2d(a, input.unsqueeze(2), weight.unsqueeze(2), bias).squeeze(2);
}

}  // namespace gr

namespace gr {

// ATen's convolution_backward for a 2-D convolution: the fused kernel conv2d's backward runs.
std::tuple<Tensor, Tensor, Tensor> convolution_backward(const Tensor& grad_output, const Tensor& input,
                                                        const Tensor& weight, OptionalIntArrayRef bias_sizes,
                                                        IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                                                        bool transposed, IntArrayRef output_padding, int64_t groups,
                                                        std::array<bool, 3> output_mask) {
  GR_CHECK(!transposed, "convolution_backward: transposed convolutions are not supported (conv_transpose2d's own "
                        "backward computes theirs)");
  GR_CHECK(input.dim() == 4 && weight.dim() == 4,
           "convolution_backward: 2-D convolutions only ([N, C, H, W] input, [C_out, C_in / groups, kH, kW] weight), "
           "got ", input.sizes(), " and ", weight.sizes());
  const native::Conv2dArgs a = native::conv2d_args(input, weight, {}, stride, padding, dilation, groups);
  return native::conv2d_backward(a, grad_output, output_mask[1] ? input : Tensor(), output_mask[0] ? weight : Tensor(),
                                 output_mask);
}

}  // namespace gr
