// Adamax step, written with tensor ops in torch's op order.
#include "nn/optim/adamax.h"

#include <cmath>

#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "core/factory.h"

namespace gr::optim {

void check_betas_options(const char* name, double lr, const Betas& betas, double eps, double weight_decay) {
  const auto [beta1, beta2] = betas;
  GR_CHECK(lr >= 0, name, ": invalid learning rate: ", lr);
  GR_CHECK(eps >= 0, name, ": invalid epsilon value: ", eps);
  GR_CHECK(beta1 >= 0 && beta1 < 1, name, ": invalid beta parameter at index 0: ", beta1);
  GR_CHECK(beta2 >= 0 && beta2 < 1, name, ": invalid beta parameter at index 1: ", beta2);
  GR_CHECK(weight_decay >= 0, name, ": invalid weight_decay value: ", weight_decay);
}

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
  for (OptimizerParamGroup& g : param_groups()) {
    const AdamaxOptions& o = options_of<AdamaxOptions>(g);
    const auto [beta1, beta2] = o.betas();
    for (Tensor& p : g.params()) {
      if (!p.grad().defined()) continue;
      OrderedDict<Tensor>& s = state(p);
      if (!s.contains("step")) {
        s.insert("step", zeros({}, kFloat64));
        s.insert("exp_avg", zeros_like(p));
        s.insert("exp_inf", zeros_like(p));
      }
      const double step = s["step"].item<double>() + 1;
      s["step"].fill_(step);
      Tensor grad = p.grad();
      if (o.weight_decay() != 0) grad = grad + p * o.weight_decay();
      s["exp_avg"].lerp_(grad, 1 - beta1);
      Tensor& exp_inf = s["exp_inf"];
      exp_inf.copy_(maximum(exp_inf.mul_(beta2), grad.abs().add_(o.eps())));
      const double clr = o.lr() / (1 - std::pow(beta1, step));
      p.add_(s["exp_avg"] / exp_inf, -clr);
    }
  }
  return loss;
}

}  // namespace gr::optim
