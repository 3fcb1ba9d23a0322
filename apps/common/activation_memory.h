// Activation memory of a training step, from the allocator's statistics of the step's device
// (core/memory_stats.h on the CPU, the caching allocator's on CUDA): what the forward keeps
// for backward, and the most the step held above what it started with (Note [Activation
// peak]). train_gpt and bench_ddp print them (activation checkpointing's effect: issue 35).
#pragma once

#include <gradring/gradring.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "core/memory_stats.h"

namespace gr::apps {

// Note [Activation peak]
// A step runs forward, loss and backward; the meter reads the allocator's allocated bytes at
// its start (S: parameters, optimizer state, gradients that already exist, anything else
// alive), after forward (F) and after backward (E), and the allocator's peak P since the start
// (its peak statistic is reset there). The figures:
//   kept      = F - S: what the forward left for backward (the saved activations);
//   peak      = max(P, F, E) - S: the most the step held above its start: activations,
//               backward's transients, checkpointing's reruns, and whatever gradient memory
//               backward had allocated and still held at that moment (gradients that existed
//               at the start are in S);
//   gradients = max(0, E - S): what the step left allocated, i.e. the .grad buffers backward
//               made (none when they existed before: gradient accumulation's later
//               micro-steps, zero_grad(set_to_none=false); only the shards' under ZeRO-2 and
//               fully_shard, which drop each full gradient once it is reduced).
// peak >= kept always: F is one of the moments P covers (and is taken into the max itself, in
// case another thread's allocation raced the peak's reset). peak is an upper bound of the
// activations' own peak: it overstates it by the gradient bytes held at the peak's moment (at
// most `gradients` in one process and under DDP; under ZeRO-2 and fully_shard possibly more,
// as full gradients come and go within backward), and by nothing when the gradients existed
// before the step. The earlier definition, P - S - gradients, understated it whenever the
// peak came before the last gradient was allocated (early in backward: train_gpt tiny printed
// a peak of 23.9 MiB below the 25.6 MiB kept).
// The bytes are the allocator's (rounded block sizes), of every thread of the process.
struct ActivationMemory {
  int64_t kept = 0;
  int64_t peak = 0;
  int64_t gradients = 0;
  // Each figure the larger of the two (the worst of several steps).
  void max_with(const ActivationMemory& o) {
    kept = std::max(kept, o.kept);
    peak = std::max(peak, o.peak);
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
  void after_forward() { forward_end_ = allocated(); }
  ActivationMemory after_backward() const {
    const int64_t end = allocated();
    ActivationMemory m;
    m.kept = forward_end_ - start_;
    m.peak = std::max({peak(), forward_end_, end}) - start_;
    m.gradients = std::max<int64_t>(0, end - start_);
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
  int64_t start_ = 0, forward_end_ = 0;
};

// One row of the activation table bench_ddp prints (MiB), and the same figures in bytes as JSON.
inline nlohmann::json activation_row(const std::string& label, const ActivationMemory& a, bool print) {
  const double mib = 1024.0 * 1024.0;
  if (print)
    std::printf("  %-22s kept %8.1f  peak %8.1f  (left by the step %8.1f)\n", label.c_str(), a.kept / mib, a.peak / mib,
                a.gradients / mib);
  return {{"kept_bytes", a.kept}, {"peak_bytes", a.peak}, {"gradient_bytes", a.gradients}};
}

}  // namespace gr::apps
