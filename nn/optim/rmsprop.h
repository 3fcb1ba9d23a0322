// RMSprop (Hinton's lecture 6e) with momentum and the centered variant, as PyTorch's.
#pragma once

#include "nn/optim/optimizer.h"
#include "nn/options.h"

namespace gr::optim {

struct RMSpropOptions : public OptimizerCloneableOptions<RMSpropOptions> {
  RMSpropOptions(double lr = 1e-2) : lr_(lr) {}
  void visit(const Visitor& f) override;
  GR_ARG(double, lr);
  GR_ARG(double, alpha) = 0.99;
  GR_ARG(double, eps) = 1e-8;
  GR_ARG(double, weight_decay) = 0.0;
  GR_ARG(double, momentum) = 0.0;
  GR_ARG(bool, centered) = false;
};

class RMSprop : public Optimizer {
 public:
  RMSprop(std::vector<Tensor> params, const RMSpropOptions& defaults = {});
  RMSprop(std::vector<OptimizerParamGroup> param_groups, const RMSpropOptions& defaults = {});
  Tensor step(LossClosure closure = nullptr) override;
};

}  // namespace gr::optim
