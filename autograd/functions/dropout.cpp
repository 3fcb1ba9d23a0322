// dropout with backward: the saved keep-mask scales the gradient like the forward.
#include "autograd/function.h"
#include "autograd/ops.h"
#include "core/native/dropout.h"

namespace gr {

using autograd::record;
using autograd::SavedTensor;

Tensor dropout(const Tensor& input, double p, bool train, Generator* gen) {
  GR_CHECK(p >= 0.0 && p <= 1.0, "dropout: probability has to be between 0 and 1, but got ", p);
  if (!train || p == 0.0) return input;  // as torch: the input itself, no random numbers drawn
  auto [out, mask] = native::dropout(input, p, gen);
  if (autograd::needs_grad(input)) {
    record("NativeDropoutBackward", {input}, {out},
           [mask = std::move(mask), scale = native::dropout_scale(p)](const TensorList& g, const std::vector<bool>&) {
             return TensorList{native::dropout_backward(g[0], mask, scale)};
           });
  }
  return out;
}

}  // namespace gr
