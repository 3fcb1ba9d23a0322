// Learning-rate schedules stepped after optimizer.step(), with PyTorch's formulas: the base
// LRScheduler, StepLR, MultiStepLR, ExponentialLR, LambdaLR, MultiplicativeLR and LinearLR.
// (Cosine, one-cycle, sequential and plateau schedules have their own files.)
#pragma once

#include <functional>
#include <vector>

#include "nn/optim/optimizer.h"

namespace gr::optim {

// Note [Scheduler epochs]
// As in PyTorch, constructing a scheduler is its first step: last_epoch becomes 0 and the
// epoch-0 lr is written (LinearLR and OneCycleLR change it there). Each step() then adds
// one epoch and applies the scheduler's chainable rule to the groups' current lr, so
// schedulers can be chained; step(epoch) jumps to an epoch with the closed form (SequentialLR
// restarts its schedulers with step(0)). Every scheduler's base lr is the group's lr before
// the first scheduler touched it (OptimizerParamGroup::initial_lr).
class LRScheduler {
 public:
  explicit LRScheduler(Optimizer& optimizer);
  virtual ~LRScheduler() = default;
  // Advances one epoch and writes the new lr into every parameter group.
  virtual void step();
  // Jumps to `epoch` (closed form where the schedule has one).
  virtual void step(int64_t epoch);
  int64_t last_epoch() const { return last_epoch_; }
  // Restores the position (for resuming: the optimizer's lr is restored separately).
  virtual void set_last_epoch(int64_t epoch) { last_epoch_ = epoch; }
  std::vector<double> get_last_lr() const;
  const std::vector<double>& base_lrs() const { return base_lrs_; }
  Optimizer& optimizer() const { return optimizer_; }

 protected:
  // The construction step (epoch 0); every derived constructor calls it last.
  void initial_step();
  // Writes compute_lr (or closed_form_lr) of every group.
  void apply(bool closed_form);
  // New lr of `group` for last_epoch_ (already advanced); `current` is the group's lr now.
  virtual double compute_lr(size_t group, double current) = 0;
  // The lr of `group` at last_epoch_ from the base lr alone; compute_lr where there is none.
  virtual double closed_form_lr(size_t group, double current) { return compute_lr(group, current); }
  Optimizer& optimizer_;
  std::vector<double> base_lrs_;
  int64_t last_epoch_ = -1;
};

// lr = base_lr * gamma ^ floor(epoch / step_size).
class StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& optimizer, int64_t step_size, double gamma = 0.1);

 protected:
  double compute_lr(size_t group, double current) override;
  double closed_form_lr(size_t group, double current) override;

 private:
  int64_t step_size_;
  double gamma_;
};

// lr = base_lr * gamma ^ (number of milestones reached); a repeated milestone counts twice.
class MultiStepLR : public LRScheduler {
 public:
  MultiStepLR(Optimizer& optimizer, std::vector<int64_t> milestones, double gamma = 0.1);

 protected:
  double compute_lr(size_t group, double current) override;
  double closed_form_lr(size_t group, double current) override;

 private:
  std::vector<int64_t> milestones_;  // sorted
  double gamma_;
};

// lr = base_lr * gamma ^ epoch.
class ExponentialLR : public LRScheduler {
 public:
  ExponentialLR(Optimizer& optimizer, double gamma);

 protected:
  double compute_lr(size_t group, double current) override;
  double closed_form_lr(size_t group, double current) override;

 private:
  double gamma_;
};

using LRLambda = std::function<double(int64_t epoch)>;

// lr = base_lr * lr_lambda(epoch), one function for all groups or one per group.
class LambdaLR : public LRScheduler {
 public:
  LambdaLR(Optimizer& optimizer, LRLambda lr_lambda);
  LambdaLR(Optimizer& optimizer, std::vector<LRLambda> lr_lambdas);

 protected:
  double compute_lr(size_t group, double current) override;

 private:
  std::vector<LRLambda> lambdas_;
};

// lr *= lr_lambda(epoch) at every step after the first.
class MultiplicativeLR : public LRScheduler {
 public:
  MultiplicativeLR(Optimizer& optimizer, LRLambda lr_lambda);
  MultiplicativeLR(Optimizer& optimizer, std::vector<LRLambda> lr_lambdas);

 protected:
  double compute_lr(size_t group, double current) override;

 private:
  std::vector<LRLambda> lambdas_;
};

// lr goes linearly from base_lr * start_factor to base_lr * end_factor over total_iters
// epochs, then stays.
class LinearLR : public LRScheduler {
 public:
  LinearLR(Optimizer& optimizer, double start_factor = 1.0 / 3, double end_factor = 1.0, int64_t total_iters = 5);

 protected:
  double compute_lr(size_t group, double current) override;
  double closed_form_lr(size_t group, double current) override;

 private:
  double start_factor_, end_factor_;
  int64_t total_iters_;
};

}  // namespace gr::optim
