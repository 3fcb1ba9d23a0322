// SequentialLR: runs one scheduler after another, switching at the milestone epochs
// (PyTorch's semantics: the next scheduler restarts from epoch 0 at its milestone).
#pragma once

#include <memory>
#include <vector>

#include "nn/optim/lr_scheduler.h"

namespace gr::optim {

class SequentialLR : public LRScheduler {
 public:
  // The schedulers must drive `optimizer`; milestones (one fewer than schedulers) increase.
  SequentialLR(Optimizer& optimizer, std::vector<std::shared_ptr<LRScheduler>> schedulers,
               std::vector<int64_t> milestones);
  void step() override;
  void step(int64_t epoch) override;

 protected:
  double compute_lr(size_t, double current) override { return current; }

 private:
  std::vector<std::shared_ptr<LRScheduler>> schedulers_;
  std::vector<int64_t> milestones_;
};

}  // namespace gr::optim
