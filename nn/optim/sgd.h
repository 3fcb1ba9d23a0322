// SGD with momentum, dampening, Nesterov momentum and weight decay (PyTorch's update rule).
#pragma once

#include "nn/optim/optimizer.h"
#include "nn/options.h"

namespace gr::optim {

struct SGDOptions : public OptimizerCloneableOptions<SGDOptions> {
  SGDOptions(double lr) : lr_(lr) {}
  void visit(const Visitor& f) override;
  GR_ARG(double, lr);
  GR_ARG(double, momentum) = 0.0;
  GR_ARG(double, dampening) = 0.0;
  GR_ARG(double, weight_decay) = 0.0;
  GR_ARG(bool, nesterov) = false;
};

class SGD : public Optimizer {
 public:
  SGD(std::vector<Tensor> params, const SGDOptions& defaults);
  SGD(std::vector<OptimizerParamGroup> param_groups, const SGDOptions& defaults);
  Tensor step(LossClosure closure = nullptr) override;
};

}  // namespace gr::optim
