// Hands an optimizer's per-parameter updates to the list steps of core/native/optimizer_steps.h
// in runs: consecutive parameters with one functor, device and dtype go in one call, which on
// a GPU is a few multi-tensor launches for a whole model (PyTorch's foreach/fused steps).
#pragma once

#include <unordered_set>
#include <utility>
#include <vector>

#include "core/native/optimizer_steps.h"

namespace gr::optim {

template <class Functor>
class StepRuns {
 public:
  using Steps = void (*)(const std::vector<native::StepOperands>&, const Functor&);
  explicit StepRuns(Steps steps) : steps_(steps) {}

  // operands: {param, grad, buffers...} as the list step takes them.
  void add(const Functor& f, native::StepOperands operands) {
    const Tensor& p = operands.front();
    // A parameter listed twice must see its first update: it starts a new run.
    const bool joins = !run_.empty() && f == f_ && p.device() == run_.front().front().device() &&
                       p.scalar_type() == run_.front().front().scalar_type() && !params_.contains(p.data_ptr());
    if (!joins) finish();
    f_ = f;
    params_.insert(p.data_ptr());
    run_.push_back(std::move(operands));
  }
  // Runs what is pending; call once after the last add().
  void finish() {
    if (!run_.empty()) steps_(run_, f_);
    run_.clear();
    params_.clear();
  }

 private:
  Steps steps_;
  Functor f_{};
  std::vector<native::StepOperands> run_;
  std::unordered_set<const void*> params_;
};

}  // namespace gr::optim
