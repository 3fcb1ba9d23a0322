// RAdam: Adam with a rectified adaptive learning rate (Liu et al. 2019), as PyTorch's.
#pragma once

#include "nn/optim/optimizer.h"
#include "nn/options.h"

namespace gr::optim {

struct RAdamOptions : public OptimizerCloneableOptions<RAdamOptions> {
  RAdamOptions(double lr = 1e-3) : lr_(lr) {}
  void visit(const Visitor& f) override;
  GR_ARG(double, lr);
  GR_ARG(Betas, betas) = std::make_tuple(0.9, 0.999);
  GR_ARG(double, eps) = 1e-8;
  GR_ARG(double, weight_decay) = 0.0;
  GR_ARG(bool, decoupled_weight_decay) = false;
};

class RAdam : public Optimizer {
 public:
  RAdam(std::vector<Tensor> params, const RAdamOptions& defaults = {});
  RAdam(std::vector<OptimizerParamGroup> param_groups, const RAdamOptions& defaults = {});
  Tensor step(LossClosure closure = nullptr) override;
};

}  // namespace gr::optim
