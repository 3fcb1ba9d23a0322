// Grad mode: whether ops record history (thread-local). NoGradGuard switches it off.
#pragma once

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

}  // namespace gr
