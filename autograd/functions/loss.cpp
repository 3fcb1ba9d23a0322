// Losses with backward: nll_loss (class weights, ignore_index, torch's weighted mean),
// cross_entropy (= nll_loss of log_softmax) and mse_loss.
#include "autograd/autocast.h"
#include "autograd/function.h"
#include "autograd/ops.h"
#include "core/factory.h"
#include "core/native/elementwise/elementwise.h"
#include "core/native/loss/loss.h"
#include "core/native/reduce/reduce.h"

namespace gr {

using autograd::record;
using autograd::SavedTensor;

Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight, Reduction reduction,
                int64_t ignore_index) {
  GR_AUTOCAST(nll_loss, input, target, weight, reduction, ignore_index);
  auto [out, total_weight] = native::nll_loss(input, target, weight, reduction, ignore_index);
  if (autograd::needs_grad(input)) {
    record("NllLossBackward0", {input}, {out},
           [sizes = input.sizes().vec(), st = SavedTensor(target), sw = SavedTensor(weight), total_weight, reduction,
            ignore_index](const TensorList& g, const std::vector<bool>&) {
             if (!autograd::needs_grad(g[0]))
               return TensorList{native::nll_loss_backward(g[0], sizes, st.unpack(), sw.unpack(), reduction,
                                                           ignore_index, total_weight)};
             // The gradient is linear in g and does not depend on the input: the kernel's
             // coefficients (its result for g = 1) times g, differentiable in g.
             Tensor coeff = native::nll_loss_backward(ones_like(g[0]), sizes, st.unpack(), sw.unpack(), reduction,
                                                      ignore_index, total_weight);
             return TensorList{coeff * (g[0].dim() > 0 ? g[0].unsqueeze(-1) : g[0])};
           });
  }
  return out;
}

Tensor cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight, Reduction reduction,
                     int64_t ignore_index) {
  GR_AUTOCAST(cross_entropy, input, target, weight, reduction, ignore_index);
  GR_CHECK(input.defined() && (input.dim() == 1 || input.dim() == 2),
           "cross_entropy: expected input of shape [N, C] or [C], got ", input.defined() ? input.sizes() : IntArrayRef());
  return nll_loss(log_softmax(input, input.dim() - 1), target, weight, reduction, ignore_index);
}

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  GR_AUTOCAST(mse_loss, input, target, reduction);
  GR_CHECK(input.defined() && target.defined(), "mse_loss: input and target must be defined");
  GR_CHECK(input.sizes() == target.sizes(), "mse_loss: input of shape ", input.sizes(),
           " and target of shape ", target.sizes(), " must have the same shape");
  GR_CHECK(input.is_floating_point() && input.scalar_type() == target.scalar_type(),
           "mse_loss: expected input and target of the same floating point dtype, got ", input.scalar_type(), " and ",
           target.scalar_type());
  Tensor diff = native::sub(input, target);
  Tensor sq = native::mul(diff, diff);
  Tensor out = reduction == Reduction::None ? sq : reduction == Reduction::Sum ? native::sum(sq) : native::mean(sq);
  if (autograd::needs_grad(input, target)) {
    const double scale = reduction == Reduction::Mean ? 2.0 / static_cast<double>(input.numel()) : 2.0;
    record("MseLossBackward0", {input, target}, {out},
           [diff, scale, si = SavedTensor(input), st = SavedTensor(target)](const TensorList& g,
                                                                           const std::vector<bool>& needs) {
             // d/dinput = scale * (input - target) * grad (grad is 0-d unless reduction is None);
             // under create_graph the difference is recomputed with history.
             Tensor x = si.unpack(), t = st.unpack();
             Tensor d = autograd::needs_grad(x, t) ? x - t : diff;
             Tensor gi = d * (g[0] * scale);
             return TensorList{needs[0] ? gi : Tensor(), needs[1] ? -gi : Tensor()};
           });
  }
  return out;
}

}  // namespace gr
