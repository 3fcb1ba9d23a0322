// RAdam step, written with tensor ops in torch's op order: plain momentum SGD until the
// variance estimate is tractable (rho_t > 5), then the rectified Adam update.
#include "nn/optim/radam.h"

#include <cmath>

#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "core/factory.h"
#include "nn/optim/adam.h"

namespace gr::optim {

void RAdamOptions::visit(const Visitor& f) {
  field(f, "lr", lr_);
  field(f, "betas", betas_);
  field(f, "eps", eps_);
  field(f, "weight_decay", weight_decay_);
  field(f, "decoupled_weight_decay", decoupled_weight_decay_);
}

RAdam::RAdam(std::vector<Tensor> params, const RAdamOptions& defaults)
    : RAdam(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}

RAdam::RAdam(std::vector<OptimizerParamGroup> param_groups, const RAdamOptions& o)
    : Optimizer("RAdam", std::move(param_groups), o.clone()) {
  check_betas_options("RAdam", o.lr(), o.betas(), o.eps(), o.weight_decay());
}

Tensor RAdam::step(LossClosure closure) {
  Tensor loss = run_closure(closure);
  NoGradGuard no_grad;
  for_each_param<RAdamOptions>([&](Tensor& p, const RAdamOptions& o, OrderedDict<Tensor>& s) {
    const auto [beta1, beta2] = o.betas();
    const double lr = o.lr();
    const double step = next_step(s, p, {"exp_avg", "exp_avg_sq"});
    if (o.decoupled_weight_decay()) p.mul_(1 - lr * o.weight_decay());
    Tensor grad = grad_with_weight_decay(p, o.decoupled_weight_decay() ? 0.0 : o.weight_decay());
    Tensor& exp_avg = s["exp_avg"];
    Tensor& exp_avg_sq = s["exp_avg_sq"];
    exp_avg.lerp_(grad, 1 - beta1);
    exp_avg_sq.mul_(beta2).add_(grad * grad, 1 - beta2);
    const double bias_correction1 = 1 - std::pow(beta1, step);
    const double bias_correction2 = 1 - std::pow(beta2, step);
    Tensor corrected = exp_avg / bias_correction1;
    const double rho_inf = 2 / (1 - beta2) - 1;
    const double rho_t = rho_inf - 2 * step * std::pow(beta2, step) / bias_correction2;
    if (rho_t > 5.0) {
      const double rect = std::sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t));
      Tensor adaptive = exp_avg_sq.sqrt().add_(o.eps()).reciprocal_().mul_(std::sqrt(bias_correction2));
      p.add_(corrected * lr * adaptive * rect, -1.0);
    } else {
      p.add_(corrected * lr, -1.0);
    }
  });
  return loss;
}

}  // namespace gr::optim
