// Adadelta (Zeiler 2012) with PyTorch's defaults and update rule.
#pragma once

#include "nn/optim/optimizer.h"
#include "nn/options.h"

namespace gr::optim {

struct AdadeltaOptions : public OptimizerCloneableOptions<AdadeltaOptions> {
  AdadeltaOptions(double lr = 1.0) : lr_(lr) {}
  void visit(const Visitor& f) override;
  GR_ARG(double, lr);
  GR_ARG(double, rho) = 0.9;
  GR_ARG(double, eps) = 1e-6;
  GR_ARG(double, weight_decay) = 0.0;
};

class Adadelta : public Optimizer {
 public:
  Adadelta(std::vector<Tensor> params, const AdadeltaOptions& defaults = {});
  Adadelta(std::vector<OptimizerParamGroup> param_groups, const AdadeltaOptions& defaults = {});
  Tensor step(LossClosure closure = nullptr) override;
};

}  // namespace gr::optim
