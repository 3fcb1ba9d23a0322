// Adagrad step: fused passes over many parameters at once (StepRuns), rounding as the tensor
// ops it was written with (Note [Tensor-op rounding of the adaptive steps]). Like torch, the
// accumulator "sum" exists from construction (it holds initial_accumulator_value).
#include "nn/optim/adagrad.h"

#include "autograd/grad_mode.h"
#include "core/factory.h"
#include "core/native/optim/optimizer_steps.h"
#include "nn/optim/step_runs.h"

namespace gr::optim {

void AdagradOptions::visit(const Visitor& f) {
  field(f, "lr", lr_);
  field(f, "lr_decay", lr_decay_);
  field(f, "weight_decay", weight_decay_);
  field(f, "initial_accumulator_value", initial_accumulator_value_);
  field(f, "eps", eps_);
}

Adagrad::Adagrad(std::vector<Tensor> params, const AdagradOptions& defaults)
    : Adagrad(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}

Adagrad::Adagrad(std::vector<OptimizerParamGroup> param_groups, const AdagradOptions& o)
    : Optimizer("Adagrad", std::move(param_groups), o.clone()) {
  GR_CHECK(o.lr() >= 0, "Adagrad: invalid learning rate: ", o.lr());
  GR_CHECK(o.lr_decay() >= 0, "Adagrad: invalid lr_decay value: ", o.lr_decay());
  GR_CHECK(o.weight_decay() >= 0, "Adagrad: invalid weight_decay value: ", o.weight_decay());
  GR_CHECK(o.initial_accumulator_value() >= 0, "Adagrad: invalid initial_accumulator_value value: ",
           o.initial_accumulator_value());
  GR_CHECK(o.eps() >= 0, "Adagrad: invalid epsilon value: ", o.eps());
  NoGradGuard no_grad;
  for (OptimizerParamGroup& g : this->param_groups())
    for (const Tensor& p : g.params()) {
      OrderedDict<Tensor>& s = state(p);
      s.insert("step", zeros({}, kFloat64));
      s.insert("sum", zeros_like(p).fill_(options_of<AdagradOptions>(g).initial_accumulator_value()));
    }
}

Tensor Adagrad::step(LossClosure closure) {
  Tensor loss = run_closure(closure);
  NoGradGuard no_grad;
  StepRuns<functors::AdagradStep<double>> runs(&native::adagrad_steps);
  for_each_param<AdagradOptions>([&](Tensor& p, const AdagradOptions& o, OrderedDict<Tensor>& s) {
    if (!s.contains("sum")) s.insert("sum", zeros_like(p).fill_(o.initial_accumulator_value()));  // a later group
    const double step = next_step(s, p, {});
    const double clr = o.lr() / (1 + (step - 1) * o.lr_decay());
    runs.add({clr, o.eps(), o.weight_decay()}, {p, p.grad().contiguous(), s["sum"]});
  });
  runs.finish();
  return loss;
}

}  // namespace gr::optim
