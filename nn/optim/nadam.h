// NAdam: Adam with Nesterov momentum and momentum decay (Dozat 2016), as PyTorch's.
#pragma once

#include "nn/optim/optimizer.h"
#include "nn/options.h"

namespace gr::optim {

struct NAdamOptions : public OptimizerCloneableOptions<NAdamOptions> {
  NAdamOptions(double lr = 2e-3) : lr_(lr) {}
  void visit(const Visitor& f) override;
  GR_ARG(double, lr);
  GR_ARG(Betas, betas) = std::make_tuple(0.9, 0.999);
  GR_ARG(double, eps) = 1e-8;
  GR_ARG(double, weight_decay) = 0.0;
  GR_ARG(double, momentum_decay) = 4e-3;
  GR_ARG(bool, decoupled_weight_decay) = false;
};

class NAdam : public Optimizer {
 public:
  NAdam(std::vector<Tensor> params, const NAdamOptions& defaults = {});
  NAdam(std::vector<OptimizerParamGroup> param_groups, const NAdamOptions& defaults = {});
  Tensor step(LossClosure closure = nullptr) override;
};

}  // namespace gr::optim
