// NAdam step, written with tensor ops in torch's op order; "mu_product" is the running
// product of the momentum schedule, kept per parameter as in torch.
#include "nn/optim/nadam.h"

#include <cmath>

#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "core/factory.h"
#include "nn/optim/adam.h"

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
  for_each_param<NAdamOptions>([&](Tensor& p, const NAdamOptions& o, OrderedDict<Tensor>& s) {
    const auto [beta1, beta2] = o.betas();
    const double lr = o.lr();
    if (!s.contains("mu_product")) s.insert("mu_product", ones({}, kFloat64));
    const double step = next_step(s, p, {"exp_avg", "exp_avg_sq"});
    const double bias_correction2 = 1 - std::pow(beta2, step);
    if (o.decoupled_weight_decay()) p.mul_(1 - lr * o.weight_decay());
    Tensor grad = grad_with_weight_decay(p, o.decoupled_weight_decay() ? 0.0 : o.weight_decay());
    const double mu = beta1 * (1. - 0.5 * std::pow(0.96, step * o.momentum_decay()));
    const double mu_next = beta1 * (1. - 0.5 * std::pow(0.96, (step + 1) * o.momentum_decay()));
    const double mu_product = s["mu_product"].item<double>() * mu;
    s["mu_product"].fill_(mu_product);
    const double mu_product_next = mu_product * mu_next;
    Tensor& exp_avg = s["exp_avg"];
    Tensor& exp_avg_sq = s["exp_avg_sq"];
    exp_avg.lerp_(grad, 1 - beta1);
    exp_avg_sq.mul_(beta2).add_(grad * grad, 1 - beta2);
    Tensor denom = (exp_avg_sq / bias_correction2).sqrt().add_(o.eps());
    p.add_(grad / denom, -lr * (1. - mu) / (1. - mu_product));
    p.add_(exp_avg / denom, -lr * mu_next / (1. - mu_product_next));
  });
  return loss;
}

}  // namespace gr::optim
