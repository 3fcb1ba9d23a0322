// Gradient accumulation into leaves.
#include "autograd/accumulate_grad.h"

#include <limits>

#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "core/native/copy/copy.h"
#include "core/native/elementwise/elementwise.h"

namespace gr::autograd {

AccumulateGrad::AccumulateGrad(const Tensor& leaf) : variable_(leaf.impl_ptr()) {
  // Note [Backward order]: accumulators run as soon as they are ready, so a leaf's
  // post-accumulate hooks fire as early as possible (DDP starts communication there).
  sequence_nr_ = std::numeric_limits<uint64_t>::max();
}

TensorList AccumulateGrad::apply(TensorList&& grads) {
  Tensor g = std::move(grads[0]);
  Tensor variable = this->variable();
  if (!g.defined() || !variable.defined()) return {};  // See Note [Accumulators hold leaves weakly]
  AutogradMeta& meta = variable.unsafe_impl()->autograd_meta();
  for (auto& [handle, hook] : meta.hooks) {
    Tensor replaced = hook(g);
    if (replaced.defined()) g = replaced;
  }
  if (GradMode::is_enabled()) {
    // create_graph: .grad keeps the gradient's history (it requires grad when the
    // gradient does), summed out of place, as PyTorch. Unlike PyTorch's, that history makes
    // no reference cycle through this node: see Note [Accumulators hold leaves weakly].
    if (g.scalar_type() != variable.scalar_type()) g = g.to(variable.scalar_type());
    meta.grad = meta.grad.defined() ? gr::add(meta.grad, g) : g.clone();
  } else if (!meta.grad.defined()) {
    // Keep the incoming buffer when nobody else holds it; otherwise copy, so that two
    // leaves never share one gradient tensor.
    bool exclusive = g.use_count() == 1 && g.storage().use_count() == 1 && g.is_contiguous();
    meta.grad = exclusive ? g : native::clone(g);
    if (meta.grad.scalar_type() != variable.scalar_type()) meta.grad = native::to_dtype(meta.grad, variable.scalar_type());
  } else {
    native::add_(meta.grad, g);
  }
  NoGradGuard no_grad;
  for (auto& [handle, hook] : meta.post_accumulate_hooks) hook(variable);
  return {};
}

}  // namespace gr::autograd
