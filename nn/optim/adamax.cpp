// Adamax step, written with tensor ops in torch's op order.
#include "nn/optim/adamax.h"

#include <cmath>

#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "core/factory.h"
#include "nn/optim/adam.h"

namespace gr::optim {

void AdamaxOptions::visit(const Visitor& f) {
  field(f, "lr", lr_);
  field(f, "betas", betas_);
  field(f, "eps", eps_);
  field(f, "weight_decay", weight_decay_);
}

Adamax::Adamax(std::vector<Tensor> params, const AdamaxOptions& defaults)
    : Adamax(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}

Adamax::Adamax(std::vector<OptimizerParamGroup> param_groups, const AdamaxOptions& o)
    : Optimizer("Adamax", std::move(param_groups), o.clone()) {
  check_betas_options("Adamax", o.lr(), o.betas(), o.eps(), o.weight_decay());
}

Tensor Adamax::step(LossClosure closure) {
  Tensor loss = run_closure(closure);
  NoGradGuard no_grad;
  for_each_param<AdamaxOptions>([&](Tensor& p, const AdamaxOptions& o, OrderedDict<Tensor>& s) {
    const auto [beta1, beta2] = o.betas();
    const double step = next_step(s, p, {"exp_avg", "exp_inf"});
    Tensor grad = grad_with_weight_decay(p, o.weight_decay());
    s["exp_avg"].lerp_(grad, 1 - beta1);
    Tensor& exp_inf = s["exp_inf"];
    exp_inf.copy_(maximum(exp_inf.mul_(beta2), grad.abs().add_(o.eps())));
    const double clr = o.lr() / (1 - std::pow(beta1, step));
    p.add_(s["exp_avg"] / exp_inf, -clr);
  });
  return loss;
}

}  // namespace gr::optim
