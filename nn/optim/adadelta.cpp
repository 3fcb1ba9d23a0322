// Adadelta step: one fused pass per parameter.
#include "nn/optim/adadelta.h"

#include "autograd/grad_mode.h"
#include "core/factory.h"
#include "core/native/optimizer_steps.h"

namespace gr::optim {

Adadelta::Adadelta(std::vector<Tensor> params, const AdadeltaOptions& o)
    : Optimizer("Adadelta", std::move(params),
                {{"lr", o.lr()}, {"rho", o.rho()}, {"eps", o.eps()}, {"weight_decay", o.weight_decay()}}) {
  GR_CHECK(o.lr() >= 0, "Adadelta: invalid learning rate: ", o.lr());
  GR_CHECK(o.rho() >= 0 && o.rho() <= 1, "Adadelta: invalid rho value: ", o.rho());
  GR_CHECK(o.eps() >= 0, "Adadelta: invalid epsilon value: ", o.eps());
  GR_CHECK(o.weight_decay() >= 0, "Adadelta: invalid weight_decay value: ", o.weight_decay());
}

void Adadelta::step() {
  NoGradGuard no_grad;
  for (ParamGroup& g : param_groups()) {
    functors::AdadeltaStep<double> f{g.lr(), g.options.at("rho"), g.options.at("eps"), g.options.at("weight_decay")};
    for (Tensor& p : g.params) {
      if (!p.grad().defined()) continue;
      OrderedDict<Tensor>& s = state(p);
      if (!s.contains("step")) {
        s.insert("step", zeros({}, kFloat64));
        s.insert("square_avg", zeros_like(p));
        s.insert("acc_delta", zeros_like(p));
      }
      s["step"].fill_(s["step"].item<double>() + 1);
      native::adadelta_step(p, p.grad().contiguous(), s["square_avg"], s["acc_delta"], f);
    }
  }
}

}  // namespace gr::optim
