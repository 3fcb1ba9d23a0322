// Anomaly detection, as torch::autograd::AnomalyMode: while it is on, every graph node keeps
// a backtrace of the forward call that created it, and the engine fails on a NaN produced
// in backward, naming the node and printing that backtrace. Debugging only: it is slow.
#pragma once

#include <string>

namespace gr::autograd {

struct AnomalyMode {
  static bool is_enabled();
  static void set_enabled(bool enabled, bool check_nan = true);
  static bool should_check_nan();
};

// Switches anomaly mode on for its lifetime (process-wide, as libtorch), then restores it.
class DetectAnomalyGuard {
 public:
  explicit DetectAnomalyGuard(bool check_nan = true);
  ~DetectAnomalyGuard();
  DetectAnomalyGuard(const DetectAnomalyGuard&) = delete;
  DetectAnomalyGuard& operator=(const DetectAnomalyGuard&) = delete;

 private:
  bool previous_enabled_, previous_check_nan_;
};

// The calling thread's stack, one demangled frame per line, skipping the innermost `skip`.
std::string current_backtrace(int skip = 1);

}  // namespace gr::autograd
