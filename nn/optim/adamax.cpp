// Adamax step: fused passes over many parameters at once (StepRuns), rounding as the tensor
// ops it was written with (Note [Tensor-op rounding of the adaptive steps]).
#include "nn/optim/adamax.h"

#include <cmath>

#include "autograd/grad_mode.h"
#include "core/factory.h"
#include "core/native/optim/optimizer_steps.h"
#include "nn/optim/adam.h"
#include "nn/optim/step_runs.h"

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
  StepRuns<functors::AdamaxStep<double>> runs(&native::adamax_steps);
  for_each_param<AdamaxOptions>([&](Tensor& p, const AdamaxOptions& o, OrderedDict<Tensor>& s) {
    const auto [beta1, beta2] = o.betas();
    const double step = next_step(s, p, {"exp_avg", "exp_inf"});
    const double clr = o.lr() / (1 - std::pow(beta1, step));
    runs.add({clr, 1 - beta1, beta2, o.eps(), o.weight_decay()}, {p, p.grad().contiguous(), s["exp_avg"], s["exp_inf"]});
  });
  runs.finish();
  return loss;
}

}  // namespace gr::optim
