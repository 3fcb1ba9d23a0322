// dropout with backward: the saved keep-mask scales the gradient like the forward (fused
// kernel for first-order passes, gr:: ops under create_graph).
#include "autograd/function.h"
#include "autograd/ops.h"
#include "core/native/activation/dropout.h"
#include "core/native/copy/copy.h"
#include "core/native/elementwise/elementwise.h"

namespace gr {

using autograd::record;
using autograd::SavedTensor;

Tensor dropout(const Tensor& input, double p, bool train, Generator* gen) {
  GR_CHECK(p >= 0.0 && p <= 1.0, "dropout: probability has to be between 0 and 1, but got ", p);
  if (!train || p == 0.0) return input;  // as torch: the input itself, no random numbers drawn
  auto [out, mask] = native::dropout(input, p, gen);
  if (autograd::needs_grad(input)) {
    // The mask is a saved tensor: under saved-tensor hooks (checkpointing) it goes with the rest.
    record("NativeDropoutBackward0", {input}, {out},
           [saved_mask = SavedTensor(mask), scale = native::dropout_scale(p)](const TensorList& g,
                                                                              const std::vector<bool>&) {
             const Tensor mask = saved_mask.unpack();
             if (!autograd::needs_grad(g[0])) return TensorList{native::dropout_backward(g[0], mask, scale)};
             // Linear in g with a constant mask: g * (mask ? scale : 0), differentiable.
             Tensor keep_scale = native::mul(native::to_dtype(mask, g[0].scalar_type()),
                                             native::wrapped_scalar(g[0], scale));
             return TensorList{g[0] * keep_scale};
           });
  }
  return out;
}

}  // namespace gr
