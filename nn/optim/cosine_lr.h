// Cosine schedules (SGDR, Loshchilov & Hutter 2017): CosineAnnealingLR and
// CosineAnnealingWarmRestarts, with PyTorch's formulas.
#pragma once

#include "nn/optim/lr_scheduler.h"

namespace gr::optim {

// Cosine from base_lr down to eta_min over t_max epochs and back up (torch's chainable form).
class CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& optimizer, int64_t t_max, double eta_min = 0.0);

 protected:
  double compute_lr(size_t group, double current) override;
  double closed_form_lr(size_t group, double current) override;

 private:
  int64_t t_max_;
  double eta_min_;
};

// Cosine from base_lr to eta_min over T_i epochs, then a restart at base_lr; the first
// period is t_0 epochs and each next one t_mult times longer.
class CosineAnnealingWarmRestarts : public LRScheduler {
 public:
  CosineAnnealingWarmRestarts(Optimizer& optimizer, int64_t t_0, int64_t t_mult = 1, double eta_min = 0.0);
  void step() override;
  void step(int64_t epoch) override;
  void set_last_epoch(int64_t epoch) override;

 protected:
  double compute_lr(size_t group, double current) override;

 private:
  int64_t t_0_, t_mult_;
  double eta_min_;
  int64_t t_i_, t_cur_ = 0;
};

}  // namespace gr::optim
