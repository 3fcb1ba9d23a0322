// SGD step: fused passes over many parameters at once (StepRuns).
#include "nn/optim/sgd.h"

#include "autograd/grad_mode.h"
#include "core/factory.h"
#include "core/native/optimizer_steps.h"
#include "nn/optim/step_runs.h"

namespace gr::optim {

void SGDOptions::visit(const Visitor& f) {
  field(f, "lr", lr_);
  field(f, "momentum", momentum_);
  field(f, "dampening", dampening_);
  field(f, "weight_decay", weight_decay_);
  field(f, "nesterov", nesterov_);
}

SGD::SGD(std::vector<Tensor> params, const SGDOptions& defaults)
    : SGD(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}

SGD::SGD(std::vector<OptimizerParamGroup> param_groups, const SGDOptions& o)
    : Optimizer("SGD", std::move(param_groups), o.clone()) {
  GR_CHECK(o.lr() >= 0, "SGD: invalid learning rate: ", o.lr());
  GR_CHECK(o.momentum() >= 0, "SGD: invalid momentum value: ", o.momentum());
  GR_CHECK(o.weight_decay() >= 0, "SGD: invalid weight_decay value: ", o.weight_decay());
  GR_CHECK(!o.nesterov() || (o.momentum() > 0 && o.dampening() == 0),
           "SGD: Nesterov momentum requires a momentum and zero dampening");
}

Tensor SGD::step(LossClosure closure) {
  Tensor loss = run_closure(closure);
  NoGradGuard no_grad;
  StepRuns<functors::SgdStep<double>> runs(&native::sgd_steps);
  for (OptimizerParamGroup& g : param_groups()) {
    const SGDOptions& o = options_of<SGDOptions>(g);
    for (Tensor& p : g.params()) {
      if (!p.grad().defined()) continue;
      OrderedDict<Tensor>& s = state(p);
      bool first = o.momentum() != 0 && !s.contains("momentum_buffer");
      if (first) s.insert("momentum_buffer", empty_like(p));
      Tensor buf = o.momentum() != 0 ? s["momentum_buffer"] : Tensor();
      functors::SgdStep<double> f{o.lr(), o.momentum(), o.dampening(), o.weight_decay(), o.nesterov(), first};
      runs.add(f, {p, p.grad().contiguous(), buf});
    }
  }
  runs.finish();
  return loss;
}

}  // namespace gr::optim
