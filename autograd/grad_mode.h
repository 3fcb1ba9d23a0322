// Grad mode: whether ops record history (thread-local). NoGradGuard switches it off;
// InferenceMode switches it off and marks the tensors made meanwhile as inference tensors.
#pragma once

#include "core/inference_mode.h"

namespace gr {

struct GradMode {
  static bool is_enabled();
  static void set_enabled(bool enabled);
};

// Scoped switch of grad mode; restores the previous mode on destruction.
class AutoGradMode {
 public:
  explicit AutoGradMode(bool enabled) : previous_(GradMode::is_enabled()) { GradMode::set_enabled(enabled); }
  ~AutoGradMode() { GradMode::set_enabled(previous_); }
  AutoGradMode(const AutoGradMode&) = delete;
  AutoGradMode& operator=(const AutoGradMode&) = delete;

 private:
  bool previous_;
};

// No history is recorded while one is alive, as with torch::NoGradGuard.
class NoGradGuard : public AutoGradMode {
 public:
  NoGradGuard() : AutoGradMode(false) {}
};

// Note [Inference tensors]
// As c10::InferenceMode: while a guard is alive nothing records history (grad mode is off)
// and every tensor created is an inference tensor (Tensor::is_inference(); views of one are
// too). Inference tensors skip autograd bookkeeping forever, so outside the mode they cannot
// be saved for backward (SavedTensor), updated in place (check_inplace) or made to require
// grad; each refuses with an error saying to clone() first. A clone made outside the mode is
// an ordinary tensor.
class InferenceMode {
 public:
  explicit InferenceMode(bool enabled = true)
      : previous_inference_(detail::inference_mode_enabled()), grad_mode_(!enabled) {
    detail::set_inference_mode_enabled(enabled);
  }
  ~InferenceMode() { detail::set_inference_mode_enabled(previous_inference_); }
  InferenceMode(const InferenceMode&) = delete;
  InferenceMode& operator=(const InferenceMode&) = delete;
  static bool is_enabled() { return detail::inference_mode_enabled(); }

 private:
  bool previous_inference_;
  AutoGradMode grad_mode_;
};

}  // namespace gr
