// RMSprop step, written with tensor ops (so it runs on every device) in torch's op order.
#include "nn/optim/rmsprop.h"

#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "core/factory.h"

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
  for_each_param<RMSpropOptions>([&](Tensor& p, const RMSpropOptions& o, OrderedDict<Tensor>& s) {
    if (next_step(s, p, {"square_avg"}) == 1) {
      if (o.momentum() > 0) s.insert("momentum_buffer", zeros_like(p));
      if (o.centered()) s.insert("grad_avg", zeros_like(p));
    }
    Tensor grad = grad_with_weight_decay(p, o.weight_decay());
    Tensor& square_avg = s["square_avg"];
    square_avg.mul_(o.alpha()).add_(grad * grad, 1 - o.alpha());
    Tensor avg;
    if (o.centered()) {
      Tensor& grad_avg = s["grad_avg"];
      grad_avg.lerp_(grad, 1 - o.alpha());
      avg = (square_avg - grad_avg * grad_avg).sqrt();
    } else {
      avg = square_avg.sqrt();
    }
    avg.add_(o.eps());
    if (o.momentum() > 0) {
      Tensor& buf = s["momentum_buffer"];
      buf.mul_(o.momentum()).add_(grad / avg);
      p.add_(buf, -o.lr());
    } else {
      p.add_(grad / avg, -o.lr());
    }
  });
  return loss;
}

}  // namespace gr::optim
