// CUDA streams: the Stream handle, the per-device pools streams come from, the calling
// thread's current stream per device, and StreamGuard, which switches it for a scope.
// See Note [CUDA streams] in runtime.h.
#pragma once

#include <cuda_runtime_api.h>

#include <utility>

#include "cuda_kernels/runtime.h"

namespace gr::cuda {

class Event;

// A non-owning handle to a stream and the device it belongs to. Streams made here come
// from pools and are never destroyed: the caching allocator keys memory by stream handle,
// and a destroyed handle could be handed out again for a new stream (see Note [Block pool]).
class Stream {
 public:
  // A stream of `device` (-1: the current one) with `priority` (lower runs first; clamped to
  // the device's range, see priority_range()). Streams of one (device, priority) are handed
  // out round-robin from a pool of 32, separate from the threads' default streams.
  static Stream create(int device = -1, int priority = 0);
  // The calling thread's current stream of `device` (-1: the current device).
  static Stream current(int device = -1);
  // The calling thread's default stream of `device`: current() unless a StreamGuard or
  // set_current() chose another.
  static Stream thread_default(int device = -1);
  // Makes `stream` the calling thread's current stream of its device. The special handles
  // (0, cudaStreamLegacy, cudaStreamPerThread) are refused: they name different streams in
  // different threads, so the allocator could not key memory by them.
  static void set_current(const Stream& stream);
  // {least, greatest} priority of `device`; numerically greatest <= least (e.g. {0, -5}).
  static std::pair<int, int> priority_range(int device = -1);

  // Wraps a stream made elsewhere (NCCL, a library). Memory allocated while it is current is
  // cached under its handle: keep the stream alive as long as that memory may be reused
  // (until empty_cache()), or a new stream given the same handle could get it too early.
  Stream(cudaStream_t handle, int device) : handle_(handle), device_(device) {}

  cudaStream_t handle() const { return handle_; }
  int device() const { return device_; }
  int priority() const;
  // True when all work queued so far has completed.
  bool query() const;
  // Blocks the host until all work queued so far has completed.
  void synchronize() const;
  // Work queued on this stream from now on waits for `event` (no host wait).
  void wait(const Event& event) const;

  bool operator==(const Stream& o) const { return handle_ == o.handle_ && device_ == o.device_; }
  bool operator!=(const Stream& o) const { return !(*this == o); }

 private:
  cudaStream_t handle_;
  int device_;
};

// Makes `stream` (and its device) current for the guard's lifetime, like c10's
// CUDAStreamGuard; restores the previous current stream of that device and the device.
class StreamGuard {
 public:
  explicit StreamGuard(const Stream& stream);
  ~StreamGuard();
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;

 private:
  DeviceGuard device_;
  Stream previous_;
};

}  // namespace gr::cuda
