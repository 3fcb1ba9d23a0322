// Adam and AdamW (decoupled weight decay), with amsgrad (PyTorch's update rules).
#pragma once

#include <utility>

#include "nn/optim/optimizer.h"
#include "nn/options.h"

namespace gr::optim {

using Betas = std::pair<double, double>;

struct AdamOptions {
  AdamOptions(double lr = 1e-3) : lr_(lr) {}
  GR_ARG(double, lr);
  GR_ARG(Betas, betas) = {0.9, 0.999};
  GR_ARG(double, eps) = 1e-8;
  GR_ARG(double, weight_decay) = 0.0;
  GR_ARG(bool, amsgrad) = false;
};

struct AdamWOptions {
  AdamWOptions(double lr = 1e-3) : lr_(lr) {}
  GR_ARG(double, lr);
  GR_ARG(Betas, betas) = {0.9, 0.999};
  GR_ARG(double, eps) = 1e-8;
  GR_ARG(double, weight_decay) = 1e-2;
  GR_ARG(bool, amsgrad) = false;
};

class Adam : public Optimizer {
 public:
  Adam(std::vector<Tensor> params, const AdamOptions& options = {});
  void step() override;

 protected:
  Adam(const char* name, std::vector<Tensor> params, double lr, std::pair<double, double> betas, double eps,
       double weight_decay, bool amsgrad, bool decoupled);

 private:
  bool decoupled_;
};

class AdamW : public Adam {
 public:
  AdamW(std::vector<Tensor> params, const AdamWOptions& options = {});
};

}  // namespace gr::optim
