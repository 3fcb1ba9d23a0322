// Adam/AdamW step: one fused pass per parameter; "step" is kept per parameter as in torch.
#include "nn/optim/adam.h"

#include <cmath>

#include "autograd/grad_mode.h"
#include "core/factory.h"
#include "core/native/optimizer_steps.h"

namespace gr::optim {

namespace {

template <class Options>
void check_adam_options(const char* name, const Options& o) {
  const auto [beta1, beta2] = o.betas();
  GR_CHECK(o.lr() >= 0, name, ": invalid learning rate: ", o.lr());
  GR_CHECK(o.eps() >= 0, name, ": invalid epsilon value: ", o.eps());
  GR_CHECK(beta1 >= 0 && beta1 < 1, name, ": invalid beta parameter at index 0: ", beta1);
  GR_CHECK(beta2 >= 0 && beta2 < 1, name, ": invalid beta parameter at index 1: ", beta2);
  GR_CHECK(o.weight_decay() >= 0, name, ": invalid weight_decay value: ", o.weight_decay());
}

// Adam and AdamW differ only in where weight decay enters (`decoupled`).
template <class Options>
void adam_update(OptimizerParamGroup& g, const Options& o, bool decoupled,
                 const std::function<OrderedDict<Tensor>&(const Tensor&)>& state) {
  const auto [beta1, beta2] = o.betas();
  for (Tensor& p : g.params()) {
    if (!p.grad().defined()) continue;
    OrderedDict<Tensor>& s = state(p);
    if (!s.contains("step")) {
      s.insert("step", zeros({}, kFloat64));
      s.insert("exp_avg", zeros_like(p));
      s.insert("exp_avg_sq", zeros_like(p));
      if (o.amsgrad()) s.insert("max_exp_avg_sq", zeros_like(p));
    }
    double step = s["step"].item<double>() + 1;
    s["step"].fill_(step);
    functors::AdamStep<double> f{o.lr(),
                                 beta1,
                                 beta2,
                                 o.eps(),
                                 o.weight_decay(),
                                 1 - std::pow(beta1, step),
                                 std::sqrt(1 - std::pow(beta2, step)),
                                 o.amsgrad(),
                                 decoupled};
    native::adam_step(p, p.grad().contiguous(), s["exp_avg"], s["exp_avg_sq"],
                      o.amsgrad() ? s["max_exp_avg_sq"] : Tensor(), f);
  }
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
  for (OptimizerParamGroup& g : this->param_groups()) check_adam_options("Adam", options_of<AdamOptions>(g));
}

AdamW::AdamW(std::vector<Tensor> params, const AdamWOptions& defaults)
    : AdamW(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}

AdamW::AdamW(std::vector<OptimizerParamGroup> param_groups, const AdamWOptions& o)
    : Optimizer("AdamW", std::move(param_groups), o.clone()) {
  for (OptimizerParamGroup& g : this->param_groups()) check_adam_options("AdamW", options_of<AdamWOptions>(g));
}

Tensor Adam::step(LossClosure closure) {
  Tensor loss = run_closure(closure);
  NoGradGuard no_grad;
  for (OptimizerParamGroup& g : param_groups())
    adam_update(g, options_of<AdamOptions>(g), false, [this](const Tensor& p) -> auto& { return state(p); });
  return loss;
}

Tensor AdamW::step(LossClosure closure) {
  Tensor loss = run_closure(closure);
  NoGradGuard no_grad;
  for (OptimizerParamGroup& g : param_groups())
    adam_update(g, options_of<AdamWOptions>(g), true, [this](const Tensor& p) -> auto& { return state(p); });
  return loss;
}

}  // namespace gr::optim
