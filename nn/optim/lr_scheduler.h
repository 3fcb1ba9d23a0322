// Learning-rate schedules: StepLR and CosineAnnealingLR, stepped once per epoch (or per
// iteration) after optimizer.step(), with PyTorch's formulas.
#pragma once

#include <vector>

#include "nn/optim/optimizer.h"

namespace gr::optim {

class LRScheduler {
 public:
  explicit LRScheduler(Optimizer& optimizer);
  virtual ~LRScheduler() = default;
  // Advances one epoch and writes the new lr into every parameter group.
  void step();
  int64_t last_epoch() const { return last_epoch_; }
  // Restores the position (for resuming: the optimizer's lr is restored separately).
  void set_last_epoch(int64_t epoch) { last_epoch_ = epoch; }
  std::vector<double> get_last_lr() const;

 protected:
  // New lr per group for last_epoch_ (already advanced); `current` is the group's lr now.
  virtual double compute_lr(size_t group, double current) const = 0;
  Optimizer& optimizer_;
  std::vector<double> base_lrs_;
  int64_t last_epoch_ = 0;
};

// lr = base_lr * gamma ^ floor(epoch / step_size).
class StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& optimizer, int64_t step_size, double gamma = 0.1);

 protected:
  double compute_lr(size_t group, double current) const override;

 private:
  int64_t step_size_;
  double gamma_;
};

// Cosine from base_lr down to eta_min over t_max epochs (torch's recursive form).
class CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& optimizer, int64_t t_max, double eta_min = 0.0);

 protected:
  double compute_lr(size_t group, double current) const override;

 private:
  int64_t t_max_;
  double eta_min_;
};

}  // namespace gr::optim
