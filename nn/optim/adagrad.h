// Adagrad (Duchi et al. 2011) with lr decay and an initial accumulator, as PyTorch's.
#pragma once

#include "nn/optim/optimizer.h"
#include "nn/options.h"

namespace gr::optim {

struct AdagradOptions : public OptimizerCloneableOptions<AdagradOptions> {
  AdagradOptions(double lr = 1e-2) : lr_(lr) {}
  void visit(const Visitor& f) override;
  GR_ARG(double, lr);
  GR_ARG(double, lr_decay) = 0.0;
  GR_ARG(double, weight_decay) = 0.0;
  GR_ARG(double, initial_accumulator_value) = 0.0;
  GR_ARG(double, eps) = 1e-10;
};

class Adagrad : public Optimizer {
 public:
  Adagrad(std::vector<Tensor> params, const AdagradOptions& defaults = {});
  Adagrad(std::vector<OptimizerParamGroup> param_groups, const AdagradOptions& defaults = {});
  Tensor step(LossClosure closure = nullptr) override;
};

}  // namespace gr::optim
