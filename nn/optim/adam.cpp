// Adam/AdamW step: one fused pass per parameter; "step" is kept per parameter as in torch.
#include "nn/optim/adam.h"

#include <cmath>

#include "autograd/grad_mode.h"
#include "core/factory.h"
#include "core/native/optimizer_steps.h"

namespace gr::optim {

Adam::Adam(const char* name, std::vector<Tensor> params, double lr, std::pair<double, double> betas, double eps,
           double weight_decay, bool amsgrad, bool decoupled)
    : Optimizer(name, std::move(params),
                {{"lr", lr}, {"beta1", betas.first}, {"beta2", betas.second}, {"eps", eps},
                 {"weight_decay", weight_decay}, {"amsgrad", amsgrad ? 1.0 : 0.0}}),
      decoupled_(decoupled) {
  GR_CHECK(lr >= 0, name, ": invalid learning rate: ", lr);
  GR_CHECK(eps >= 0, name, ": invalid epsilon value: ", eps);
  GR_CHECK(betas.first >= 0 && betas.first < 1, name, ": invalid beta parameter at index 0: ", betas.first);
  GR_CHECK(betas.second >= 0 && betas.second < 1, name, ": invalid beta parameter at index 1: ", betas.second);
  GR_CHECK(weight_decay >= 0, name, ": invalid weight_decay value: ", weight_decay);
}

Adam::Adam(std::vector<Tensor> params, const AdamOptions& o)
    : Adam("Adam", std::move(params), o.lr(), o.betas(), o.eps(), o.weight_decay(), o.amsgrad(), false) {}

AdamW::AdamW(std::vector<Tensor> params, const AdamWOptions& o)
    : Adam("AdamW", std::move(params), o.lr(), o.betas(), o.eps(), o.weight_decay(), o.amsgrad(), true) {}

void Adam::step() {
  NoGradGuard no_grad;
  for (ParamGroup& g : param_groups()) {
    const double beta1 = g.options.at("beta1"), beta2 = g.options.at("beta2");
    const bool amsgrad = g.options.at("amsgrad") != 0;
    for (Tensor& p : g.params) {
      if (!p.grad().defined()) continue;
      OrderedDict<Tensor>& s = state(p);
      if (!s.contains("step")) {
        s.insert("step", zeros({}, kFloat64));
        s.insert("exp_avg", zeros_like(p));
        s.insert("exp_avg_sq", zeros_like(p));
        if (amsgrad) s.insert("max_exp_avg_sq", zeros_like(p));
      }
      double step = s["step"].item<double>() + 1;
      s["step"].fill_(step);
      functors::AdamStep<double> f{g.lr(),
                                   beta1,
                                   beta2,
                                   g.options.at("eps"),
                                   g.options.at("weight_decay"),
                                   1 - std::pow(beta1, step),
                                   std::sqrt(1 - std::pow(beta2, step)),
                                   amsgrad,
                                   decoupled_};
      native::adam_step(p, p.grad().contiguous(), s["exp_avg"], s["exp_avg_sq"],
                        amsgrad ? s["max_exp_avg_sq"] : Tensor(), f);
    }
  }
}

}  // namespace gr::optim
