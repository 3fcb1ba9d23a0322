// LR scheduler stepping and the formulas of the simple schedules (PyTorch's chainable
// get_lr and closed forms).
#include "nn/optim/lr_scheduler.h"

#include <algorithm>
#include <cmath>

namespace gr::optim {

// See Note [Scheduler epochs].
LRScheduler::LRScheduler(Optimizer& optimizer) : optimizer_(optimizer) {
  for (OptimizerParamGroup& g : optimizer.param_groups()) {
    if (!g.initial_lr) g.initial_lr = g.lr();
    base_lrs_.push_back(*g.initial_lr);
  }
}

void LRScheduler::initial_step() {
  last_epoch_ = -1;
  step();
}

void LRScheduler::apply(bool closed_form) {
  auto& groups = optimizer_.param_groups();
  GR_CHECK(groups.size() == base_lrs_.size(), "LRScheduler: the optimizer's parameter groups changed since the ",
           "scheduler was made");
  for (size_t i = 0; i < groups.size(); ++i)
    groups[i].set_lr(closed_form ? closed_form_lr(i, groups[i].lr()) : compute_lr(i, groups[i].lr()));
}

void LRScheduler::step() {
  ++last_epoch_;
  apply(false);
}

void LRScheduler::step(int64_t epoch) {
  last_epoch_ = epoch;
  apply(true);
}

std::vector<double> LRScheduler::get_last_lr() const {
  std::vector<double> lrs;
  for (const OptimizerParamGroup& g : optimizer_.param_groups()) lrs.push_back(g.lr());
  return lrs;
}

StepLR::StepLR(Optimizer& optimizer, int64_t step_size, double gamma)
    : LRScheduler(optimizer), step_size_(step_size), gamma_(gamma) {
  GR_CHECK(step_size > 0, "StepLR: step_size must be positive, got ", step_size);
  initial_step();
}

double StepLR::compute_lr(size_t, double current) {
  return (last_epoch_ == 0 || last_epoch_ % step_size_ != 0) ? current : current * gamma_;
}

double StepLR::closed_form_lr(size_t group, double) {
  return base_lrs_[group] * std::pow(gamma_, static_cast<double>(last_epoch_ / step_size_));
}

MultiStepLR::MultiStepLR(Optimizer& optimizer, std::vector<int64_t> milestones, double gamma)
    : LRScheduler(optimizer), milestones_(std::move(milestones)), gamma_(gamma) {
  std::sort(milestones_.begin(), milestones_.end());
  initial_step();
}

double MultiStepLR::compute_lr(size_t, double current) {
  auto hits = std::count(milestones_.begin(), milestones_.end(), last_epoch_);
  return hits == 0 ? current : current * std::pow(gamma_, static_cast<double>(hits));
}

double MultiStepLR::closed_form_lr(size_t group, double) {
  auto passed = std::upper_bound(milestones_.begin(), milestones_.end(), last_epoch_) - milestones_.begin();
  return base_lrs_[group] * std::pow(gamma_, static_cast<double>(passed));
}

ExponentialLR::ExponentialLR(Optimizer& optimizer, double gamma) : LRScheduler(optimizer), gamma_(gamma) {
  initial_step();
}

double ExponentialLR::compute_lr(size_t, double current) { return last_epoch_ == 0 ? current : current * gamma_; }

double ExponentialLR::closed_form_lr(size_t group, double) {
  return base_lrs_[group] * std::pow(gamma_, static_cast<double>(last_epoch_));
}

namespace {

std::vector<LRLambda> per_group(const char* name, const Optimizer& optimizer, std::vector<LRLambda> lambdas) {
  const size_t n = optimizer.param_groups().size();
  if (lambdas.size() == 1) lambdas.resize(n, lambdas[0]);
  GR_CHECK(lambdas.size() == n, name, ": expected ", n, " lr_lambdas, but got ", lambdas.size());
  for (const LRLambda& f : lambdas) GR_CHECK(f != nullptr, name, ": an lr_lambda is empty");
  return lambdas;
}

}  // namespace

LambdaLR::LambdaLR(Optimizer& optimizer, LRLambda lr_lambda)
    : LambdaLR(optimizer, std::vector<LRLambda>{std::move(lr_lambda)}) {}

LambdaLR::LambdaLR(Optimizer& optimizer, std::vector<LRLambda> lr_lambdas)
    : LRScheduler(optimizer), lambdas_(per_group("LambdaLR", optimizer, std::move(lr_lambdas))) {
  initial_step();
}

double LambdaLR::compute_lr(size_t group, double) { return base_lrs_[group] * lambdas_[group](last_epoch_); }

MultiplicativeLR::MultiplicativeLR(Optimizer& optimizer, LRLambda lr_lambda)
    : MultiplicativeLR(optimizer, std::vector<LRLambda>{std::move(lr_lambda)}) {}

MultiplicativeLR::MultiplicativeLR(Optimizer& optimizer, std::vector<LRLambda> lr_lambdas)
    : LRScheduler(optimizer), lambdas_(per_group("MultiplicativeLR", optimizer, std::move(lr_lambdas))) {
  initial_step();
}

double MultiplicativeLR::compute_lr(size_t group, double current) {
  return last_epoch_ > 0 ? current * lambdas_[group](last_epoch_) : current;
}

LinearLR::LinearLR(Optimizer& optimizer, double start_factor, double end_factor, int64_t total_iters)
    : LRScheduler(optimizer), start_factor_(start_factor), end_factor_(end_factor), total_iters_(total_iters) {
  GR_CHECK(start_factor > 0 && start_factor <= 1, "LinearLR: starting multiplicative factor expected to be greater ",
           "than 0 and less or equal to 1, got ", start_factor);
  GR_CHECK(end_factor >= 0 && end_factor <= 1, "LinearLR: ending multiplicative factor expected to be between 0 ",
           "and 1, got ", end_factor);
  GR_CHECK(total_iters > 0, "LinearLR: total_iters must be positive, got ", total_iters);
  initial_step();
}

double LinearLR::compute_lr(size_t, double current) {
  if (last_epoch_ == 0) return current * start_factor_;
  if (last_epoch_ > total_iters_) return current;
  const double span = end_factor_ - start_factor_;
  return current * (1. + span / (static_cast<double>(total_iters_) * start_factor_ +
                                 static_cast<double>(last_epoch_ - 1) * span));
}

double LinearLR::closed_form_lr(size_t group, double) {
  const double done = static_cast<double>(std::min(total_iters_, last_epoch_)) / static_cast<double>(total_iters_);
  return base_lrs_[group] * (start_factor_ + (end_factor_ - start_factor_) * done);
}

}  // namespace gr::optim
