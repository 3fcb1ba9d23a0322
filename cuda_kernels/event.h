// CUDA events: Event (record on a stream, make a stream wait, query, synchronize, time), and
// the pooled timing-free events the allocators record when memory is used across streams.
#pragma once

#include <cuda_runtime_api.h>

#include "core/block_pool.h"
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
// cudaEventQuery as a bool: true when complete, false when not yet (the "not ready" status is
// cleared so later checks do not see it); other errors throw.
bool event_completed(cudaEvent_t event);

// The event half of the allocators' BlockPoolBackend: timing-free events, reused from a free
// list per device, recorded on the stream a block was used on (on that stream's device).
class StreamEventBackend : public BlockPoolBackend {
 public:
  void* record_event(uintptr_t stream) override;
  bool event_done(void* event) override;
  void event_synchronize(void* event) override;
  void release_event(void* event) noexcept override;
};
}  // namespace detail

}  // namespace gr::cuda
