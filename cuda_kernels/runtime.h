// The CUDA device runtime of the backend: device selection, the current stream, launch sizes,
// the device allocator, and initialize_backend() (called once, from core/backends.cpp).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/allocator.h"
#include "core/cuda_memory.h"

namespace gr::cuda {

// Counts the visible devices and, when there is one, registers the CUDA allocator. No device
// or a too-old driver gives 0 without throwing. Use gr::cuda_device_count(), which calls
// this exactly once.
int initialize_backend();

// current_device(): core/cuda_memory.h (public, every build); it lands in get_device().
// cudaGetDevice.
int get_device();
// cudaSetDevice with a range check. Callers use gr::cuda::set_device() (core/cuda_memory.h,
// included here), the public form that every build can call; it lands here.
void set_current_device(int index);

// Makes device `index` current for the guard's lifetime (nothing to do when it already is).
class DeviceGuard {
 public:
  explicit DeviceGuard(int index);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

// Note [CUDA streams]
// Kernels and copies of this backend are queued on current_stream(): the calling thread's
// current stream of the current device. Unless a StreamGuard (stream.h) chose another, that
// is the thread's default stream of the device, a real stream taken round-robin from a pool
// of 32 (blocking w.r.t. the legacy stream, as cudaStreamPerThread is). Work from one thread
// therefore runs in order. Work queued by different threads (or on different streams) is not
// ordered: hand a CUDA tensor over with an Event (event.h), and if its memory is used on a
// stream other than the one it was allocated on, call record_stream() (caching_allocator.h).
// Streams are real handles valid in every thread, so the caching allocator keys its pools by
// them. Host-blocking points: copies to the CPU and from pageable CPU memory, which wait for
// their stream (see Note [Pinned copies] in pinned.h). Each kernel call runs on its tensors'
// device: core's dispatch makes that device current for the call (CudaDeviceScope in
// core/dispatch.h, installed by initialize_backend), so its stream is that device's current
// stream and x.cuda(1) + 1 works whichever device the thread has selected. Allocation
// follows the tensor's requested device too (DeviceGuard in the allocator).
cudaStream_t current_stream();
// For the calling thread, on the stream's device; nullptr restores the current device's
// default. Prefer StreamGuard, which restores the previous stream.
void set_current_stream(cudaStream_t stream);

// Blocks for a grid-stride loop over n items with `threads` per block: enough to fill the
// current device a few times over, never more than the items need (n > 0).
unsigned grid_size(int64_t n, int threads);

// The caching device allocator (caching_allocator.h): blocks cached per device and stream.
Allocator* device_allocator();

// Note [Host synchronisations]
// Each place where this backend makes the host wait for a device calls note_host_sync(): a
// stream, event or device synchronise, a copy to the CPU or from pageable CPU memory (Note
// [Pinned copies]), a cudaFree, a thrust call that returns a count or ends synchronised
// (nonzero, sort). host_sync_count() is their number in this process, for tests and profiles:
// a training step should make at most one (its loss.item()), as issue 31 asks, since each one
// stops the host queueing work while the device drains.
void note_host_sync() noexcept;
uint64_t host_sync_count() noexcept;

}  // namespace gr::cuda
