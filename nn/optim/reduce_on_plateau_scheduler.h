// ReduceLROnPlateauScheduler: lowers the lr when a metric stops improving (libtorch's name
// and argument order; ReduceLROnPlateau is the same class under PyTorch's name).
#pragma once

#include <vector>

#include "nn/optim/optimizer.h"

namespace gr::optim {

class ReduceLROnPlateauScheduler {
 public:
  enum SchedulerMode { min, max };
  enum ThresholdMode { rel, abs };
  // min_lr: empty (0 for all), one value, or one per group. libtorch takes float factor,
  // min_lr and metrics; these are double, as in Python, so the lrs equal PyTorch's.
  explicit ReduceLROnPlateauScheduler(Optimizer& optimizer, SchedulerMode mode = min, double factor = 0.1,
                                      int64_t patience = 10, double threshold = 1e-4, ThresholdMode threshold_mode = rel,
                                      int64_t cooldown = 0, const std::vector<double>& min_lr = {}, double eps = 1e-8,
                                      bool verbose = false);
  virtual ~ReduceLROnPlateauScheduler() = default;
  // One epoch with this value of the metric.
  void step(double metric);
  int64_t last_epoch() const { return last_epoch_; }
  int64_t num_bad_epochs() const { return num_bad_epochs_; }
  double best() const { return best_; }

 private:
  bool is_better(double a) const;
  Optimizer& optimizer_;
  SchedulerMode mode_;
  double factor_;
  int64_t patience_;
  double threshold_;
  ThresholdMode threshold_mode_;
  int64_t cooldown_;
  std::vector<double> min_lrs_;
  double eps_;
  bool verbose_;
  double best_;
  int64_t last_epoch_ = 0, num_bad_epochs_ = 0, cooldown_counter_ = 0;
};

using ReduceLROnPlateau = ReduceLROnPlateauScheduler;

}  // namespace gr::optim
