// CUDA events: Event (record on a stream, make a stream wait, query, synchronize, time), and
// the pool of timing-free events the allocators record when memory is used across streams.
#pragma once

#include <cuda_runtime_api.h>

#include "cuda_kernels/stream.h"

namespace gr::cuda {

// Owns one cudaEvent_t, created at the first record() on the device of that stream (as
// c10's CUDAEvent). Before any record(), query() is true and waiting on it does nothing.
class Event {
 public:
  explicit Event(bool enable_timing = false) : timing_(enable_timing) {}
  ~Event();
  Event(Event&& o) noexcept;
  Event& operator=(Event&& o) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  // Captures the work queued on `stream` so far; re-recording moves the capture point.
  void record(const Stream& stream);
  void record() { record(Stream::current()); }
  // Work queued on `stream` from now on waits for this event; the host does not wait.
  void block(const Stream& stream) const { stream.wait(*this); }
  // True when the captured work has completed (or nothing was recorded).
  bool query() const;
  // Blocks the host until the captured work has completed.
  void synchronize() const;
  // Milliseconds from this event to `end` (both recorded, both with enable_timing).
  float elapsed_ms(const Event& end) const;

  bool recorded() const { return recorded_; }
  cudaEvent_t handle() const { return event_; }
  int device() const { return device_; }

 private:
  cudaEvent_t event_ = nullptr;
  int device_ = -1;
  bool timing_;
  bool recorded_ = false;
};

namespace detail {
// A timing-free event of `device` from a free list (created when it is empty); give it back
// with give_pooled_event(). Used by the allocators for record_stream bookkeeping.
cudaEvent_t take_pooled_event(int device);
void give_pooled_event(int device, cudaEvent_t event) noexcept;
}  // namespace detail

}  // namespace gr::cuda
