// Activation memory of a training step, from the allocator's statistics of the step's device
// (core/memory_stats.h on the CPU, the caching allocator's on CUDA): what the forward keeps
// for backward, and the most the step held above its start less the gradients it leaves.
// train_gpt and bench_ddp print them (activation checkpointing's effect: issue 35).
#pragma once

#include <gradring/gradring.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "core/memory_stats.h"

namespace gr::apps {

// Bytes, as the allocator counts them (rounded block sizes).
struct ActivationMemory {
  int64_t kept = 0;       // allocated after forward less before it: the activations saved for backward
  int64_t peak = 0;       // the step's peak above its start less `gradients`: activations, backward's
                          // transients and checkpointing's reruns at their worst moment
  int64_t step_peak = 0;  // the step's peak above its start
  int64_t gradients = 0;  // allocated after backward less before forward: the .grad buffers backward
                          // made (none when they existed before). Subtracting them all from the peak
                          // is exact when the peak comes after the last one, else an underestimate.
  // Each figure the larger of the two (the worst of several steps).
  void max_with(const ActivationMemory& o) {
    kept = std::max(kept, o.kept);
    peak = std::max(peak, o.peak);
    step_peak = std::max(step_peak, o.step_peak);
    gradients = std::max(gradients, o.gradients);
  }
};

// before_forward(), after_forward(), after_backward() around one step (forward, loss and
// backward) on one thread of one process. Resets the device allocator's peak statistic.
class ActivationMeter {
 public:
  explicit ActivationMeter(Device device) : device_(device) {}

  void before_forward() {
    if (device_.is_cuda()) cuda::reset_peak_memory_stats(device_.index());
    else reset_cpu_peak_memory_stats();
    start_ = allocated();
  }
  void after_forward() { kept_ = allocated() - start_; }
  ActivationMemory after_backward() const {
    ActivationMemory m;
    m.kept = kept_;
    m.step_peak = peak() - start_;
    m.gradients = std::max<int64_t>(0, allocated() - start_);
    m.peak = m.step_peak - m.gradients;
    return m;
  }

 private:
  int64_t allocated() const {
    return device_.is_cuda() ? cuda::memory_stats(device_.index()).allocated_bytes : cpu_memory_stats().allocated_bytes;
  }
  int64_t peak() const {
    return device_.is_cuda() ? cuda::memory_stats(device_.index()).peak_allocated_bytes
                             : cpu_memory_stats().peak_allocated_bytes;
  }

  Device device_;
  int64_t start_ = 0, kept_ = 0;
};

// One row of the activation table bench_ddp prints (MiB), and the same figures in bytes as JSON.
inline nlohmann::json activation_row(const std::string& label, const ActivationMemory& a, bool print) {
  const double mib = 1024.0 * 1024.0;
  if (print)
    std::printf("  %-22s kept %8.1f  peak %8.1f  (step peak %8.1f, gradients %8.1f)\n", label.c_str(), a.kept / mib,
                a.peak / mib, a.step_peak / mib, a.gradients / mib);
  return {{"kept_bytes", a.kept}, {"peak_bytes", a.peak}, {"step_peak_bytes", a.step_peak}, {"gradient_bytes", a.gradients}};
}

}  // namespace gr::apps
