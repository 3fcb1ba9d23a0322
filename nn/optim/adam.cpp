// Adam/AdamW step: fused passes over many parameters at once (StepRuns); "step" is kept per
// parameter as in torch.
#include "nn/optim/adam.h"

#include <cmath>

#include "autograd/grad_mode.h"
#include "core/factory.h"
#include "core/native/optimizer_steps.h"
#include "nn/optim/step_runs.h"

namespace gr::optim {

void check_betas_options(const char* name, double lr, const Betas& betas, double eps, double weight_decay) {
  const auto [beta1, beta2] = betas;
  GR_CHECK(lr >= 0, name, ": invalid learning rate: ", lr);
  GR_CHECK(eps >= 0, name, ": invalid epsilon value: ", eps);
  GR_CHECK(beta1 >= 0 && beta1 < 1, name, ": invalid beta parameter at index 0: ", beta1);
  GR_CHECK(beta2 >= 0 && beta2 < 1, name, ": invalid beta parameter at index 1: ", beta2);
  GR_CHECK(weight_decay >= 0, name, ": invalid weight_decay value: ", weight_decay);
}

namespace {

// Adam and AdamW differ only in where weight decay enters (`decoupled`). `step` counts
// this update (1 first).
template <class Options>
void adam_update(StepRuns<functors::AdamStep<double>>& runs, Tensor& p, const Options& o, OrderedDict<Tensor>& s,
                 bool decoupled, double step) {
  const auto [beta1, beta2] = o.betas();
  if (o.amsgrad() && !s.contains("max_exp_avg_sq")) s.insert("max_exp_avg_sq", zeros_like(p));
  functors::AdamStep<double> f{o.lr(),
                               beta1,
                               beta2,
                               o.eps(),
                               o.weight_decay(),
                               1 - std::pow(beta1, step),
                               std::sqrt(1 - std::pow(beta2, step)),
                               o.amsgrad(),
                               decoupled};
  runs.add(f, {p, p.grad().contiguous(), s["exp_avg"], s["exp_avg_sq"], o.amsgrad() ? s["max_exp_avg_sq"] : Tensor()});
}

}  // namespace

void AdamOptions::visit(const Visitor& f) {
  field(f, "lr", lr_);
  field(f, "betas", betas_);
  field(f, "eps", eps_);
  field(f, "weight_decay", weight_decay_);
  field(f, "amsgrad", amsgrad_);
}

void AdamWOptions::visit(const Visitor& f) {
  field(f, "lr", lr_);
  field(f, "betas", betas_);
  field(f, "eps", eps_);
  field(f, "weight_decay", weight_decay_);
  field(f, "amsgrad", amsgrad_);
}

Adam::Adam(std::vector<Tensor> params, const AdamOptions& defaults)
    : Adam(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}

Adam::Adam(std::vector<OptimizerParamGroup> param_groups, const AdamOptions& o)
    : Optimizer("Adam", std::move(param_groups), o.clone()) {
  check_betas_options("Adam", o.lr(), o.betas(), o.eps(), o.weight_decay());
}

AdamW::AdamW(std::vector<Tensor> params, const AdamWOptions& defaults)
    : AdamW(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}

AdamW::AdamW(std::vector<OptimizerParamGroup> param_groups, const AdamWOptions& o)
    : Optimizer("AdamW", std::move(param_groups), o.clone()) {
  check_betas_options("AdamW", o.lr(), o.betas(), o.eps(), o.weight_decay());
}

Tensor Adam::step(LossClosure closure) {
  Tensor loss = run_closure(closure);
  NoGradGuard no_grad;
  StepRuns<functors::AdamStep<double>> runs(&native::adam_steps);
  for_each_param<AdamOptions>([&](Tensor& p, const AdamOptions& o, OrderedDict<Tensor>& s) {
    adam_update(runs, p, o, s, false, next_step(s, p, {"exp_avg", "exp_avg_sq"}));
  });
  runs.finish();
  return loss;
}

Tensor AdamW::step(LossClosure closure) {
  Tensor loss = run_closure(closure);
  NoGradGuard no_grad;
  StepRuns<functors::AdamStep<double>> runs(&native::adam_steps);
  for_each_param<AdamWOptions>([&](Tensor& p, const AdamWOptions& o, OrderedDict<Tensor>& s) {
    adam_update(runs, p, o, s, true, next_step(s, p, {"exp_avg", "exp_avg_sq"}));
  });
  runs.finish();
  return loss;
}

}  // namespace gr::optim
