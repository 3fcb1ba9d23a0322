// AccumulateGrad: the node at each leaf that requires grad. It runs the leaf's tensor
// hooks, adds the gradient into .grad, then runs its post-accumulate hooks (DDP's seam).
#pragma once

#include <memory>

#include "autograd/node.h"

namespace gr::autograd {

// Note [Accumulators hold leaves weakly]
// A leaf holds its accumulator weakly (AutogradMeta::grad_accumulator) and, unlike PyTorch's
// AccumulateGrad, the accumulator holds its leaf weakly too. PyTorch's strong reference makes
// backward(create_graph=true) a reference cycle: leaf -> .grad -> the gradient's graph (which
// reaches the leaf's accumulator whenever the gradient depends on the leaf) -> accumulator ->
// leaf, which PyTorch answers with a warning to reset .grad. Here no cycle forms. What the weak
// reference gives up: a leaf that nobody else holds gets no gradient, but its .grad and its
// hooks, which live on the leaf, are gone with it, so nothing could have seen one.
class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(const Tensor& leaf);
  std::string name() const override { return "AccumulateGrad"; }
  TensorList apply(TensorList&& grads) override;
  // The leaf, or an undefined tensor once nothing else holds it.
  Tensor variable() const { return Tensor(variable_.lock()); }

 private:
  std::weak_ptr<TensorImpl> variable_;
};

}  // namespace gr::autograd
