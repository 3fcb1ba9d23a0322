// CosineAnnealingLR and CosineAnnealingWarmRestarts.
#include "nn/optim/cosine_lr.h"

#include <cmath>
#include <numbers>

namespace gr::optim {

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, int64_t t_max, double eta_min)
    : LRScheduler(optimizer), t_max_(t_max), eta_min_(eta_min) {
  GR_CHECK(t_max > 0, "CosineAnnealingLR: T_max must be positive, got ", t_max);
  initial_step();
}

double CosineAnnealingLR::compute_lr(size_t group, double current) {
  const double pi = std::numbers::pi, base = base_lrs_[group], t = static_cast<double>(last_epoch_),
               T = static_cast<double>(t_max_);
  if (last_epoch_ == 0) return current;
  if ((last_epoch_ - 1 - t_max_) % (2 * t_max_) == 0) return current + (base - eta_min_) * (1 - std::cos(pi / T)) / 2;
  return (1 + std::cos(pi * t / T)) / (1 + std::cos(pi * (t - 1) / T)) * (current - eta_min_) + eta_min_;
}

double CosineAnnealingLR::closed_form_lr(size_t group, double) {
  const double pi = std::numbers::pi;
  return eta_min_ + (base_lrs_[group] - eta_min_) *
                        (1 + std::cos(pi * static_cast<double>(last_epoch_) / static_cast<double>(t_max_))) / 2;
}

CosineAnnealingWarmRestarts::CosineAnnealingWarmRestarts(Optimizer& optimizer, int64_t t_0, int64_t t_mult,
                                                         double eta_min)
    : LRScheduler(optimizer), t_0_(t_0), t_mult_(t_mult), eta_min_(eta_min), t_i_(t_0) {
  GR_CHECK(t_0 > 0, "CosineAnnealingWarmRestarts: expected a positive T_0, but got ", t_0);
  GR_CHECK(t_mult >= 1, "CosineAnnealingWarmRestarts: expected an integer T_mult >= 1, but got ", t_mult);
  step(0);
}

void CosineAnnealingWarmRestarts::step() {
  if (last_epoch_ < 0) return step(0);
  ++last_epoch_;
  if (++t_cur_ >= t_i_) {
    t_cur_ -= t_i_;
    t_i_ *= t_mult_;
  }
  apply(false);
}

void CosineAnnealingWarmRestarts::step(int64_t epoch) {
  GR_CHECK(epoch >= 0, "CosineAnnealingWarmRestarts: expected a non-negative epoch, but got ", epoch);
  set_last_epoch(epoch);
  apply(false);
}

void CosineAnnealingWarmRestarts::set_last_epoch(int64_t epoch) {
  // The position within the current period follows from the epoch alone.
  last_epoch_ = epoch;
  t_i_ = t_0_;
  t_cur_ = epoch;
  while (t_cur_ >= t_i_) {
    t_cur_ -= t_i_;
    t_i_ *= t_mult_;
  }
}

double CosineAnnealingWarmRestarts::compute_lr(size_t group, double) {
  const double pi = std::numbers::pi;
  return eta_min_ + (base_lrs_[group] - eta_min_) *
                        (1 + std::cos(pi * static_cast<double>(t_cur_) / static_cast<double>(t_i_))) / 2;
}

}  // namespace gr::optim
