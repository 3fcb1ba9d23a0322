// A host-side gate for stream-ordering tests: Gate::hold(stream) queues a host function that
// blocks `stream` until open() (or a deadline, so a broken test fails instead of hanging).
#pragma once

#include <cuda_runtime_api.h>
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace gr::cuda_test {

class Gate {
 public:
  explicit Gate(std::chrono::milliseconds deadline = std::chrono::seconds(10)) : deadline_(deadline) {}
  ~Gate() { open(); }

  void hold(cudaStream_t stream) { REQUIRE(cudaLaunchHostFunc(stream, &Gate::wait, this) == cudaSuccess); }
  void open() { open_.store(true, std::memory_order_release); }
  bool timed_out() const { return timed_out_.load(); }

 private:
  static void wait(void* self) {  // runs on a CUDA runtime thread: no CUDA calls here
    auto* g = static_cast<Gate*>(self);
    const auto until = std::chrono::steady_clock::now() + g->deadline_;
    while (!g->open_.load(std::memory_order_acquire)) {
      if (std::chrono::steady_clock::now() > until) {
        g->timed_out_ = true;
        return;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }

  std::chrono::milliseconds deadline_;
  std::atomic<bool> open_{false}, timed_out_{false};
};

}  // namespace gr::cuda_test
