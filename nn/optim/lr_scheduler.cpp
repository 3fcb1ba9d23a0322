// LR scheduler stepping and the StepLR / CosineAnnealingLR formulas.
#include "nn/optim/lr_scheduler.h"

#include <cmath>
#include <numbers>

namespace gr::optim {

LRScheduler::LRScheduler(Optimizer& optimizer) : optimizer_(optimizer) {
  for (const OptimizerParamGroup& g : optimizer.param_groups()) base_lrs_.push_back(g.lr());
}

void LRScheduler::step() {
  ++last_epoch_;
  auto& groups = optimizer_.param_groups();
  GR_CHECK(groups.size() == base_lrs_.size(), "LRScheduler: the optimizer's parameter groups changed since the ",
           "scheduler was made");
  for (size_t i = 0; i < groups.size(); ++i) groups[i].set_lr(compute_lr(i, groups[i].lr()));
}

std::vector<double> LRScheduler::get_last_lr() const {
  std::vector<double> lrs;
  for (const OptimizerParamGroup& g : optimizer_.param_groups()) lrs.push_back(g.lr());
  return lrs;
}

StepLR::StepLR(Optimizer& optimizer, int64_t step_size, double gamma)
    : LRScheduler(optimizer), step_size_(step_size), gamma_(gamma) {
  GR_CHECK(step_size > 0, "StepLR: step_size must be positive, got ", step_size);
}

double StepLR::compute_lr(size_t, double current) const {
  // As torch: multiply by gamma at every multiple of step_size.
  return (last_epoch_ == 0 || last_epoch_ % step_size_ != 0) ? current : current * gamma_;
}

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, int64_t t_max, double eta_min)
    : LRScheduler(optimizer), t_max_(t_max), eta_min_(eta_min) {
  GR_CHECK(t_max > 0, "CosineAnnealingLR: T_max must be positive, got ", t_max);
}

double CosineAnnealingLR::compute_lr(size_t group, double current) const {
  const double pi = std::numbers::pi, base = base_lrs_[group], t = static_cast<double>(last_epoch_),
               T = static_cast<double>(t_max_);
  if (last_epoch_ == 0) return current;
  if ((last_epoch_ - 1 - t_max_) % (2 * t_max_) == 0)
    return current + (base - eta_min_) * (1 - std::cos(pi / T)) / 2;
  return (1 + std::cos(pi * t / T)) / (1 + std::cos(pi * (t - 1) / T)) * (current - eta_min_) + eta_min_;
}

}  // namespace gr::optim
