// AccumulateGrad: the node at each leaf that requires grad. It runs the leaf's tensor
// hooks, adds the gradient into .grad, then runs its post-accumulate hooks (DDP's seam).
#pragma once

#include "autograd/node.h"

namespace gr::autograd {

class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(Tensor leaf);
  std::string name() const override { return "AccumulateGrad"; }
  TensorList apply(TensorList&& grads) override;
  const Tensor& variable() const { return variable_; }

 private:
  Tensor variable_;
};

}  // namespace gr::autograd
