// The CUDA device runtime of the backend: device selection, the current stream, launch sizes,
// the device allocator, and initialize_backend() (called once, from core/backends.cpp).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/allocator.h"

namespace gr::cuda {

// Counts the visible devices and, when there is one, registers the CUDA allocator. No device
// or a too-old driver gives 0 without throwing. Use gr::cuda_device_count(), which calls
// this exactly once.
int initialize_backend();

int current_device();
void set_device(int index);

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
// Kernels and copies of this backend are queued on current_stream(): by default the calling
// thread's per-thread default stream of the current device (cudaStreamPerThread). Work from
// one thread therefore runs in order. Work queued by different threads is not ordered, so a
// CUDA tensor handed to another thread needs a synchronization first (events come later).
// The only host-blocking point is a copy to or from the CPU, which waits for its stream.
// Kernels run on the current device: one device per process (as DDP uses it) needs nothing,
// several devices in one process need set_device() around the work of each.
cudaStream_t current_stream();
void set_current_stream(cudaStream_t stream);  // for the calling thread; nullptr restores the default

// Blocks for a grid-stride loop over n items with `threads` per block: enough to fill the
// current device a few times over, never more than the items need (n > 0).
unsigned grid_size(int64_t n, int threads);

// cudaMalloc/cudaFree; every free implicitly waits for the device (a caching allocator
// that avoids this comes later).
Allocator* device_allocator();

}  // namespace gr::cuda
