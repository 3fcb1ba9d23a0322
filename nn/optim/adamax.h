// Adamax: Adam with the infinity norm (Kingma & Ba 2015, section 7), as PyTorch's.
#pragma once

#include "nn/optim/optimizer.h"
#include "nn/options.h"

namespace gr::optim {

struct AdamaxOptions : public OptimizerCloneableOptions<AdamaxOptions> {
  AdamaxOptions(double lr = 2e-3) : lr_(lr) {}
  void visit(const Visitor& f) override;
  GR_ARG(double, lr);
  GR_ARG(Betas, betas) = std::make_tuple(0.9, 0.999);
  GR_ARG(double, eps) = 1e-8;
  GR_ARG(double, weight_decay) = 0.0;
};

class Adamax : public Optimizer {
 public:
  Adamax(std::vector<Tensor> params, const AdamaxOptions& defaults = {});
  Adamax(std::vector<OptimizerParamGroup> param_groups, const AdamaxOptions& defaults = {});
  Tensor step(LossClosure closure = nullptr) override;
};

}  // namespace gr::optim
