// SGD step: one fused pass per parameter.
#include "nn/optim/sgd.h"

#include "autograd/grad_mode.h"
#include "core/factory.h"
#include "core/native/optimizer_steps.h"

namespace gr::optim {

SGD::SGD(std::vector<Tensor> params, const SGDOptions& o)
    : Optimizer("SGD", std::move(params),
                {{"lr", o.lr()}, {"momentum", o.momentum()}, {"dampening", o.dampening()},
                 {"weight_decay", o.weight_decay()}, {"nesterov", o.nesterov() ? 1.0 : 0.0}}) {
  GR_CHECK(o.lr() >= 0, "SGD: invalid learning rate: ", o.lr());
  GR_CHECK(o.momentum() >= 0, "SGD: invalid momentum value: ", o.momentum());
  GR_CHECK(o.weight_decay() >= 0, "SGD: invalid weight_decay value: ", o.weight_decay());
  GR_CHECK(!o.nesterov() || (o.momentum() > 0 && o.dampening() == 0),
           "SGD: Nesterov momentum requires a momentum and zero dampening");
}

void SGD::step() {
  NoGradGuard no_grad;
  for (ParamGroup& g : param_groups()) {
    const double momentum = g.options.at("momentum");
    for (Tensor& p : g.params) {
      if (!p.grad().defined()) continue;
      OrderedDict<Tensor>& s = state(p);
      bool first = momentum != 0 && !s.contains("momentum_buffer");
      if (first) s.insert("momentum_buffer", empty_like(p));
      Tensor buf = momentum != 0 ? s["momentum_buffer"] : Tensor();
      functors::SgdStep<double> f{g.lr(), momentum, g.options.at("dampening"), g.options.at("weight_decay"),
                                  g.options.at("nesterov") != 0, first};
      native::sgd_step(p, p.grad().contiguous(), buf, f);
    }
  }
}

}  // namespace gr::optim
