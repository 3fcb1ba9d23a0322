// Adam and AdamW (decoupled weight decay), with amsgrad (PyTorch's update rules).
#pragma once

#include "nn/optim/optimizer.h"
#include "nn/options.h"

namespace gr::optim {

struct AdamOptions : public OptimizerCloneableOptions<AdamOptions> {
  AdamOptions(double lr = 1e-3) : lr_(lr) {}
  void visit(const Visitor& f) override;
  GR_ARG(double, lr);
  GR_ARG(Betas, betas) = std::make_tuple(0.9, 0.999);
  GR_ARG(double, eps) = 1e-8;
  GR_ARG(double, weight_decay) = 0.0;
  GR_ARG(bool, amsgrad) = false;
};

struct AdamWOptions : public OptimizerCloneableOptions<AdamWOptions> {
  AdamWOptions(double lr = 1e-3) : lr_(lr) {}
  void visit(const Visitor& f) override;
  GR_ARG(double, lr);
  GR_ARG(Betas, betas) = std::make_tuple(0.9, 0.999);
  GR_ARG(double, eps) = 1e-8;
  GR_ARG(double, weight_decay) = 1e-2;
  GR_ARG(bool, amsgrad) = false;
};

class Adam : public Optimizer {
 public:
  Adam(std::vector<Tensor> params, const AdamOptions& defaults = {});
  Adam(std::vector<OptimizerParamGroup> param_groups, const AdamOptions& defaults = {});
  Tensor step(LossClosure closure = nullptr) override;
};

class AdamW : public Optimizer {
 public:
  AdamW(std::vector<Tensor> params, const AdamWOptions& defaults = {});
  AdamW(std::vector<OptimizerParamGroup> param_groups, const AdamWOptions& defaults = {});
  Tensor step(LossClosure closure = nullptr) override;
};

// Checks the values every Adam-family optimizer shares (lr, eps, betas in [0, 1), weight_decay).
void check_betas_options(const char* name, double lr, const Betas& betas, double eps, double weight_decay);

}  // namespace gr::optim
