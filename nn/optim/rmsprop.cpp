// RMSprop step: fused passes over many parameters at once (StepRuns), rounding as the tensor
// ops it was written with (Note [Tensor-op rounding of the adaptive steps]).
#include "nn/optim/rmsprop.h"

#include "autograd/grad_mode.h"
#include "core/factory.h"
#include "core/native/optim/optimizer_steps.h"
#include "nn/optim/step_runs.h"

namespace gr::optim {

void RMSpropOptions::visit(const Visitor& f) {
  field(f, "lr", lr_);
  field(f, "alpha", alpha_);
  field(f, "eps", eps_);
  field(f, "weight_decay", weight_decay_);
  field(f, "momentum", momentum_);
  field(f, "centered", centered_);
}

RMSprop::RMSprop(std::vector<Tensor> params, const RMSpropOptions& defaults)
    : RMSprop(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}

RMSprop::RMSprop(std::vector<OptimizerParamGroup> param_groups, const RMSpropOptions& o)
    : Optimizer("RMSprop", std::move(param_groups), o.clone()) {
  GR_CHECK(o.lr() >= 0, "RMSprop: invalid learning rate: ", o.lr());
  GR_CHECK(o.eps() >= 0, "RMSprop: invalid epsilon value: ", o.eps());
  GR_CHECK(o.momentum() >= 0, "RMSprop: invalid momentum value: ", o.momentum());
  GR_CHECK(o.weight_decay() >= 0, "RMSprop: invalid weight_decay value: ", o.weight_decay());
  GR_CHECK(o.alpha() >= 0, "RMSprop: invalid alpha value: ", o.alpha());
}

Tensor RMSprop::step(LossClosure closure) {
  Tensor loss = run_closure(closure);
  NoGradGuard no_grad;
  StepRuns<functors::RmspropStep<double>> runs(&native::rmsprop_steps);
  for_each_param<RMSpropOptions>([&](Tensor& p, const RMSpropOptions& o, OrderedDict<Tensor>& s) {
    if (next_step(s, p, {"square_avg"}) == 1) {
      if (o.momentum() > 0) s.insert("momentum_buffer", zeros_like(p));
      if (o.centered()) s.insert("grad_avg", zeros_like(p));
    }
    const functors::RmspropStep<double> f{o.lr(),           o.alpha(),       1 - o.alpha(),   o.eps(),
                                          o.weight_decay(), o.momentum(), o.momentum() > 0, o.centered()};
    runs.add(f, {p, p.grad().contiguous(), s["square_avg"], f.with_momentum ? s["momentum_buffer"] : Tensor(),
                 f.centered ? s["grad_avg"] : Tensor()});
  });
  runs.finish();
  return loss;
}

}  // namespace gr::optim
