// SequentialLR: resets the lr, rewinds the schedulers and restarts the first, as torch does.
#include "nn/optim/sequential_lr.h"

#include <algorithm>

namespace gr::optim {

SequentialLR::SequentialLR(Optimizer& optimizer, std::vector<std::shared_ptr<LRScheduler>> schedulers,
                           std::vector<int64_t> milestones)
    : LRScheduler(optimizer), schedulers_(std::move(schedulers)), milestones_(std::move(milestones)) {
  GR_CHECK(!schedulers_.empty(), "SequentialLR: expects at least one scheduler");
  for (size_t i = 0; i < schedulers_.size(); ++i) {
    GR_CHECK(schedulers_[i] != nullptr, "SequentialLR: scheduler ", i, " is null");
    GR_CHECK(&schedulers_[i]->optimizer() == &optimizer, "SequentialLR: expects all schedulers to belong to the same ",
             "optimizer, but got scheduler ", i, " with a different one");
  }
  GR_CHECK(milestones_.size() + 1 == schedulers_.size(), "SequentialLR: sequential schedulers expects number of ",
           "schedulers provided to be one more than the number of milestone points, but got ", schedulers_.size(),
           " schedulers and ", milestones_.size(), " milestones");
  GR_CHECK(std::is_sorted(milestones_.begin(), milestones_.end()), "SequentialLR: milestones must increase");
  // Back to the initial lr, every scheduler one epoch back, then the first one's construction step.
  for (OptimizerParamGroup& g : optimizer.param_groups()) g.set_lr(*g.initial_lr);
  for (auto& s : schedulers_) s->set_last_epoch(s->last_epoch() - 1);
  schedulers_[0]->set_last_epoch(-1);
  schedulers_[0]->step();
  last_epoch_ = 0;
}

void SequentialLR::step() {
  ++last_epoch_;
  const size_t idx = std::upper_bound(milestones_.begin(), milestones_.end(), last_epoch_) - milestones_.begin();
  if (idx > 0 && milestones_[idx - 1] == last_epoch_) schedulers_[idx]->step(0);
  else schedulers_[idx]->step();
}

void SequentialLR::step(int64_t) {
  GR_ERROR("SequentialLR: step(epoch) is not supported; call step()");
}

}  // namespace gr::optim
