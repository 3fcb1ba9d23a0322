// OneCycleLR (Smith & Topin 2017): lr warms up to max_lr and anneals far below the start,
// while momentum (or Adam's beta1) cycles the other way; PyTorch's phases and formulas.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "nn/optim/lr_scheduler.h"
#include "nn/options.h"

namespace gr::optim {

struct OneCycleLROptions {
  // One max_lr for every group, or one per group.
  OneCycleLROptions(double max_lr) : max_lr_({max_lr}) {}
  OneCycleLROptions(std::vector<double> max_lr) : max_lr_(std::move(max_lr)) {}
  GR_ARG(std::vector<double>, max_lr);
  // Either total_steps, or epochs and steps_per_epoch.
  GR_ARG(std::optional<int64_t>, total_steps) = std::nullopt;
  GR_ARG(std::optional<int64_t>, epochs) = std::nullopt;
  GR_ARG(std::optional<int64_t>, steps_per_epoch) = std::nullopt;
  GR_ARG(double, pct_start) = 0.3;
  GR_ARG(std::string, anneal_strategy) = "cos";  // "cos" or "linear"
  GR_ARG(bool, cycle_momentum) = true;
  GR_ARG(double, base_momentum) = 0.85;
  GR_ARG(double, max_momentum) = 0.95;
  GR_ARG(double, div_factor) = 25.0;
  GR_ARG(double, final_div_factor) = 1e4;
  GR_ARG(bool, three_phase) = false;
};

class OneCycleLR : public LRScheduler {
 public:
  OneCycleLR(Optimizer& optimizer, const OneCycleLROptions& options);
  int64_t total_steps() const { return total_steps_; }

 protected:
  double compute_lr(size_t group, double current) override;

 private:
  struct Phase {
    double end_step;
    int start_lr, end_lr;  // 0: initial, 1: max, 2: min
    bool momentum_up;      // base -> max momentum (else max -> base); the last 3-phase one stays at max
    bool momentum_flat;
  };
  double anneal(double start, double end, double pct) const;
  OneCycleLROptions options_;
  int64_t total_steps_;
  std::vector<Phase> phases_;
  std::vector<double> lr_points_;  // per group: initial, max, min
  std::string momentum_key_;       // "momentum" or "betas.0"; empty when not cycling
};

}  // namespace gr::optim
