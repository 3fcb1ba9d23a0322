// RAdam step: fused passes over many parameters at once (StepRuns), rounding as the tensor ops
// it was written with (Note [Tensor-op rounding of the adaptive steps]): plain momentum SGD
// until the variance estimate is tractable (rho_t > 5, from the host's step count), then the
// rectified Adam update.
#include "nn/optim/radam.h"

#include <cmath>

#include "autograd/grad_mode.h"
#include "core/factory.h"
#include "core/native/optim/optimizer_steps.h"
#include "nn/optim/adam.h"
#include "nn/optim/step_runs.h"

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
  StepRuns<functors::RadamStep<double>> runs(&native::radam_steps);
  for_each_param<RAdamOptions>([&](Tensor& p, const RAdamOptions& o, OrderedDict<Tensor>& s) {
    const auto [beta1, beta2] = o.betas();
    const double lr = o.lr();
    const double step = next_step(s, p, {"exp_avg", "exp_avg_sq"});
    const double bias_correction2 = 1 - std::pow(beta2, step);
    const double rho_inf = 2 / (1 - beta2) - 1;
    const double rho_t = rho_inf - 2 * step * std::pow(beta2, step) / bias_correction2;
    const bool rectified = rho_t > 5.0;
    const double rect =
        rectified ? std::sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) : 1.0;
    const bool decoupled = o.decoupled_weight_decay();
    const functors::RadamStep<double> f{lr,
                                        1 - beta1,
                                        beta2,
                                        1 - beta2,
                                        o.eps(),
                                        decoupled ? 0.0 : o.weight_decay(),
                                        1 - lr * o.weight_decay(),
                                        1 - std::pow(beta1, step),
                                        std::sqrt(bias_correction2),
                                        rect,
                                        decoupled,
                                        rectified};
    runs.add(f, {p, p.grad().contiguous(), s["exp_avg"], s["exp_avg_sq"]});
  });
  runs.finish();
  return loss;
}

}  // namespace gr::optim
