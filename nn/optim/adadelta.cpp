// Adadelta step: fused passes over many parameters at once (StepRuns).
#include "nn/optim/adadelta.h"

#include "autograd/grad_mode.h"
#include "core/factory.h"
#include "core/native/optimizer_steps.h"
#include "nn/optim/step_runs.h"

namespace gr::optim {

void AdadeltaOptions::visit(const Visitor& f) {
  field(f, "lr", lr_);
  field(f, "rho", rho_);
  field(f, "eps", eps_);
  field(f, "weight_decay", weight_decay_);
}

Adadelta::Adadelta(std::vector<Tensor> params, const AdadeltaOptions& defaults)
    : Adadelta(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}

Adadelta::Adadelta(std::vector<OptimizerParamGroup> param_groups, const AdadeltaOptions& o)
    : Optimizer("Adadelta", std::move(param_groups), o.clone()) {
  GR_CHECK(o.lr() >= 0, "Adadelta: invalid learning rate: ", o.lr());
  GR_CHECK(o.rho() >= 0 && o.rho() <= 1, "Adadelta: invalid rho value: ", o.rho());
  GR_CHECK(o.eps() >= 0, "Adadelta: invalid epsilon value: ", o.eps());
  GR_CHECK(o.weight_decay() >= 0, "Adadelta: invalid weight_decay value: ", o.weight_decay());
}

Tensor Adadelta::step(LossClosure closure) {
  Tensor loss = run_closure(closure);
  NoGradGuard no_grad;
  StepRuns<functors::AdadeltaStep<double>> runs(&native::adadelta_steps);
  for_each_param<AdadeltaOptions>([&](Tensor& p, const AdadeltaOptions& o, OrderedDict<Tensor>& s) {
    next_step(s, p, {"square_avg", "acc_delta"});
    functors::AdadeltaStep<double> f{o.lr(), o.rho(), o.eps(), o.weight_decay()};
    runs.add(f, {p, p.grad().contiguous(), s["square_avg"], s["acc_delta"]});
  });
  runs.finish();
  return loss;
}

}  // namespace gr::optim
