// NAdam step: fused passes over many parameters at once (StepRuns), rounding as the tensor ops
// it was written with (Note [Tensor-op rounding of the adaptive steps]); "mu_product", the
// running product of the momentum schedule, is a CPU scalar per parameter as in torch, so the
// step reads nothing back from a GPU.
#include "nn/optim/nadam.h"

#include <cmath>

#include "autograd/grad_mode.h"
#include "core/factory.h"
#include "core/native/optim/optimizer_steps.h"
#include "nn/optim/adam.h"
#include "nn/optim/step_runs.h"

namespace gr::optim {

void NAdamOptions::visit(const Visitor& f) {
  field(f, "lr", lr_);
  field(f, "betas", betas_);
  field(f, "eps", eps_);
  field(f, "weight_decay", weight_decay_);
  field(f, "momentum_decay", momentum_decay_);
  field(f, "decoupled_weight_decay", decoupled_weight_decay_);
}

NAdam::NAdam(std::vector<Tensor> params, const NAdamOptions& defaults)
    : NAdam(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}

NAdam::NAdam(std::vector<OptimizerParamGroup> param_groups, const NAdamOptions& o)
    : Optimizer("NAdam", std::move(param_groups), o.clone()) {
  check_betas_options("NAdam", o.lr(), o.betas(), o.eps(), o.weight_decay());
  GR_CHECK(o.momentum_decay() >= 0, "NAdam: invalid momentum_decay value: ", o.momentum_decay());
}

Tensor NAdam::step(LossClosure closure) {
  Tensor loss = run_closure(closure);
  NoGradGuard no_grad;
  StepRuns<functors::NadamStep<double>> runs(&native::nadam_steps);
  for_each_param<NAdamOptions>([&](Tensor& p, const NAdamOptions& o, OrderedDict<Tensor>& s) {
    const auto [beta1, beta2] = o.betas();
    const double lr = o.lr();
    if (!s.contains("mu_product")) s.insert("mu_product", ones({}, kFloat64));
    const double step = next_step(s, p, {"exp_avg", "exp_avg_sq"});
    const double mu = beta1 * (1. - 0.5 * std::pow(0.96, step * o.momentum_decay()));
    const double mu_next = beta1 * (1. - 0.5 * std::pow(0.96, (step + 1) * o.momentum_decay()));
    const double mu_product = s["mu_product"].item<double>() * mu;
    s["mu_product"].fill_(mu_product);
    const double mu_product_next = mu_product * mu_next;
    const bool decoupled = o.decoupled_weight_decay();
    const functors::NadamStep<double> f{1 - beta1,
                                        beta2,
                                        1 - beta2,
                                        o.eps(),
                                        decoupled ? 0.0 : o.weight_decay(),
                                        1 - lr * o.weight_decay(),
                                        1 - std::pow(beta2, step),
                                        -lr * (1. - mu) / (1. - mu_product),
                                        -lr * mu_next / (1. - mu_product_next),
                                        decoupled};
    runs.add(f, {p, p.grad().contiguous(), s["exp_avg"], s["exp_avg_sq"]});
  });
  runs.finish();
  return loss;
}

}  // namespace gr::optim
