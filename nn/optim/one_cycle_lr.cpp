// OneCycleLR: the phases, the annealing and the momentum cycle.
#include "nn/optim/one_cycle_lr.h"

#include <cmath>
#include <numbers>

namespace gr::optim {

OneCycleLR::OneCycleLR(Optimizer& optimizer, const OneCycleLROptions& o) : LRScheduler(optimizer), options_(o) {
  if (o.total_steps()) {
    GR_CHECK(*o.total_steps() > 0, "OneCycleLR: expected a positive total_steps, but got ", *o.total_steps());
    total_steps_ = *o.total_steps();
  } else {
    GR_CHECK(o.epochs() && o.steps_per_epoch(), "OneCycleLR: you must define either total_steps OR (epochs AND ",
             "steps_per_epoch)");
    GR_CHECK(*o.epochs() > 0 && *o.steps_per_epoch() > 0, "OneCycleLR: expected positive epochs and steps_per_epoch, ",
             "but got ", *o.epochs(), " and ", *o.steps_per_epoch());
    total_steps_ = *o.epochs() * *o.steps_per_epoch();
  }
  GR_CHECK(o.pct_start() >= 0 && o.pct_start() <= 1, "OneCycleLR: expected a float between 0 and 1 for pct_start, ",
           "but got ", o.pct_start());
  GR_CHECK(o.anneal_strategy() == "cos" || o.anneal_strategy() == "linear",
           "OneCycleLR: anneal_strategy must be one of 'cos' or 'linear', instead got ", o.anneal_strategy());
  const double n = static_cast<double>(total_steps_), up = o.pct_start() * n - 1;
  if (o.three_phase())
    phases_ = {{up, 0, 1, false, false}, {2 * o.pct_start() * n - 2, 1, 0, true, false}, {n - 1, 0, 2, false, true}};
  else
    phases_ = {{up, 0, 1, false, false}, {n - 1, 1, 2, true, false}};

  auto& groups = optimizer.param_groups();
  std::vector<double> max_lr = o.max_lr();
  if (max_lr.size() == 1) max_lr.resize(groups.size(), max_lr[0]);
  GR_CHECK(max_lr.size() == groups.size(), "OneCycleLR: expected ", groups.size(), " values for max_lr, got ",
           max_lr.size());
  if (o.cycle_momentum()) {
    const OptimizerOptions& d = optimizer.defaults();
    momentum_key_ = d.has("momentum") ? "momentum" : d.has("betas.0") ? "betas.0" : "";
    GR_CHECK(!momentum_key_.empty(), "OneCycleLR: optimizer must support momentum or beta1 with `cycle_momentum` ",
             "option enabled");
  }
  for (size_t i = 0; i < groups.size(); ++i) {
    const double initial = max_lr[i] / o.div_factor();
    groups[i].initial_lr = initial;
    groups[i].set_lr(initial);
    base_lrs_[i] = initial;
    lr_points_.insert(lr_points_.end(), {initial, max_lr[i], initial / o.final_div_factor()});
    if (!momentum_key_.empty()) groups[i].options().set(momentum_key_, o.max_momentum());
  }
  initial_step();
}

double OneCycleLR::anneal(double start, double end, double pct) const {
  if (options_.anneal_strategy() == "linear") return (end - start) * pct + start;
  return end + (start - end) / 2.0 * (std::cos(std::numbers::pi * pct) + 1);
}

double OneCycleLR::compute_lr(size_t group, double) {
  GR_CHECK(last_epoch_ <= total_steps_, "OneCycleLR: tried to step ", last_epoch_, " times. The specified number of ",
           "total steps is ", total_steps_);
  const double step = static_cast<double>(last_epoch_);
  double start_step = 0, lr = 0;
  for (size_t i = 0; i < phases_.size(); ++i) {
    const Phase& p = phases_[i];
    if (step <= p.end_step || i + 1 == phases_.size()) {
      const double pct = (step - start_step) / (p.end_step - start_step);
      lr = anneal(lr_points_[3 * group + p.start_lr], lr_points_[3 * group + p.end_lr], pct);
      if (!momentum_key_.empty()) {
        const double lo = options_.base_momentum(), hi = options_.max_momentum();
        const double m = p.momentum_flat ? anneal(hi, hi, pct) : p.momentum_up ? anneal(lo, hi, pct) : anneal(hi, lo, pct);
        optimizer_.param_groups()[group].options().set(momentum_key_, m);
      }
      break;
    }
    start_step = p.end_step;
  }
  return lr;
}

}  // namespace gr::optim
