// ReduceLROnPlateauScheduler: PyTorch's patience, threshold and cooldown rules.
#include "nn/optim/reduce_on_plateau_scheduler.h"

#include <algorithm>
#include <cstdio>
#include <limits>

namespace gr::optim {

ReduceLROnPlateauScheduler::ReduceLROnPlateauScheduler(Optimizer& optimizer, SchedulerMode mode, double factor,
                                                       int64_t patience, double threshold, ThresholdMode threshold_mode,
                                                       int64_t cooldown, const std::vector<double>& min_lr, double eps,
                                                       bool verbose)
    : optimizer_(optimizer),
      mode_(mode),
      factor_(factor),
      patience_(patience),
      threshold_(threshold),
      threshold_mode_(threshold_mode),
      cooldown_(cooldown),
      min_lrs_(min_lr),
      eps_(eps),
      verbose_(verbose),
      best_(mode == min ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity()) {
  GR_CHECK(factor < 1.0, "ReduceLROnPlateauScheduler: factor should be < 1.0, got ", factor);
  const size_t n = optimizer.param_groups().size();
  if (min_lrs_.empty()) min_lrs_.assign(n, 0.0);
  if (min_lrs_.size() == 1) min_lrs_.resize(n, min_lrs_[0]);
  GR_CHECK(min_lrs_.size() == n, "ReduceLROnPlateauScheduler: expected ", n, " min_lrs, got ", min_lrs_.size());
}

bool ReduceLROnPlateauScheduler::is_better(double a) const {
  if (mode_ == min) return threshold_mode_ == rel ? a < best_ * (1 - threshold_) : a < best_ - threshold_;
  return threshold_mode_ == rel ? a > best_ * (threshold_ + 1) : a > best_ + threshold_;
}

void ReduceLROnPlateauScheduler::step(double metric) {
  ++last_epoch_;
  if (is_better(metric)) {
    best_ = metric;
    num_bad_epochs_ = 0;
  } else {
    ++num_bad_epochs_;
  }
  if (cooldown_counter_ > 0) {
    --cooldown_counter_;
    num_bad_epochs_ = 0;  // ignore bad epochs in cooldown
  }
  if (num_bad_epochs_ > patience_) {
    auto& groups = optimizer_.param_groups();
    for (size_t i = 0; i < groups.size(); ++i) {
      const double old_lr = groups[i].lr(), new_lr = std::max(old_lr * factor_, min_lrs_[i]);
      if (old_lr - new_lr > eps_) {
        groups[i].set_lr(new_lr);
        if (verbose_) std::printf("Epoch %lld: reducing learning rate of group %zu to %.4e.\n",
                                  static_cast<long long>(last_epoch_), i, new_lr);
      }
    }
    cooldown_counter_ = cooldown_;
    num_bad_epochs_ = 0;
  }
}

}  // namespace gr::optim
