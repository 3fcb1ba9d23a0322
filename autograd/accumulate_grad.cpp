// Gradient accumulation into leaves.
#include "autograd/accumulate_grad.h"

#include <limits>

#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "core/native/copy/copy.h"
#include "core/native/elementwise/elementwise.h"

namespace gr::autograd {

AccumulateGrad::AccumulateGrad(Tensor leaf) : variable_(std::move(leaf)) {
  // Note [Backward order]: accumulators run as soon as they are ready, so a leaf's
  // post-accumulate hooks fire as early as possible (DDP starts communication there).
  sequence_nr_ = std::numeric_limits<uint64_t>::max();
}

TensorList AccumulateGrad::apply(TensorList&& grads) {
  Tensor g = std::move(grads[0]);
  if (!g.defined()) return {};
  AutogradMeta& meta = variable_.unsafe_impl()->autograd_meta();
  for (auto& [handle, hook] : meta.hooks) {
    Tensor replaced = hook(g);
    if (replaced.defined()) g = replaced;
  }
  if (GradMode::is_enabled()) {
    // create_graph: .grad keeps the gradient's history (it requires grad when the
    // gradient does), summed out of place, as PyTorch. Like PyTorch, this makes a reference
    // cycle leaf -> .grad -> graph -> this node -> leaf when the graph reaches this leaf;
    // reset .grad (or the leaf) when done with it.
    if (g.scalar_type() != variable_.scalar_type()) g = g.to(variable_.scalar_type());
    meta.grad = meta.grad.defined() ? gr::add(meta.grad, g) : g.clone();
  } else if (!meta.grad.defined()) {
    // Keep the incoming buffer when nobody else holds it; otherwise copy, so that two
    // leaves never share one gradient tensor.
    bool exclusive = g.use_count() == 1 && g.storage().use_count() == 1 && g.is_contiguous();
    meta.grad = exclusive ? g : native::clone(g);
    if (meta.grad.scalar_type() != variable_.scalar_type()) meta.grad = native::to_dtype(meta.grad, variable_.scalar_type());
  } else {
    native::add_(meta.grad, g);
  }
  NoGradGuard no_grad;
  for (auto& [handle, hook] : meta.post_accumulate_hooks) hook(variable_);
  return {};
}

}  // namespace gr::autograd
