// conv2d with backward: the kernels of core/native/conv2d.h, input saved only when the
// weight wants a gradient and weight only when the input does.
#include "autograd/function.h"
#include "autograd/ops.h"
#include "core/native/conv2d.h"

namespace gr {

using autograd::record;
using autograd::SavedTensor;

Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride, IntArrayRef padding,
              IntArrayRef dilation, int64_t groups) {
  const native::Conv2dArgs args = native::conv2d_args(input, weight, bias, stride, padding, dilation, groups);
  Tensor out = native::conv2d(args, input, weight, bias);
  if (autograd::needs_grad(input, weight, bias)) {
    SavedTensor si(weight.requires_grad() ? input : Tensor()), sw(input.requires_grad() ? weight : Tensor());
    record("Conv2dBackward", {input, weight, bias}, {out},
           [si, sw, args](const TensorList& g, const std::vector<bool>& needs) {
             const Tensor none;
             auto [gi, gw, gb] =
                 native::conv2d_backward(args, g[0], needs[1] ? si.unpack() : none, needs[0] ? sw.unpack() : none,
                                         {needs[0], needs[1], needs.size() > 2 && needs[2]});
             return TensorList{gi, gw, gb};
           });
  }
  return out;
}

}  // namespace gr
