// The CUDA memory API every build can call: the caching allocator's stats and empty_cache(),
// and page-locked ("pinned") host memory. The CUDA backend installs the implementation
// (CudaHooks) when it finds a device; without one, stats are zero, empty_cache() does
// nothing, is_pinned() is false and pin_memory() throws, as in libtorch.
#pragma once

#include <cstddef>
#include <string>

#include "core/allocator.h"
#include "core/block_pool.h"
#include "core/tensor.h"

namespace gr::cuda {

// Fields as in BlockPoolStats; raw_allocs / raw_frees count cudaMalloc / cudaFree calls.
using MemoryStats = BlockPoolStats;

// The caching allocator of `device` (-1: the current device). Zero without a device.
MemoryStats memory_stats(int device = -1);
void reset_peak_memory_stats(int device = -1);
// Returns the cached, unused device segments of every device and the unused pinned host
// segments to CUDA (waiting for pending cross-stream uses first). Memory in use stays.
void empty_cache();
// The pinned host allocator (cudaHostAlloc segments, same bookkeeping).
MemoryStats pinned_memory_stats();
// Blocks until every stream of `device` (-1: the current device) has finished its work, as
// torch.cuda.synchronize(); for timing and tests. Does nothing without a device.
void synchronize(int device = -1);
// Makes `device` the calling thread's current CUDA device (as torch.cuda.set_device): where
// kernels, streams and new communicators go. One GPU per process (DDP) calls it once, first.
// Throws without a device.
void set_device(int device);
// The calling thread's current CUDA device (0 unless set_device chose another). Throws
// without a device.
int current_device();

// What torch.cuda.get_device_properties reports, the part the apps use (the MFU's peak).
struct DeviceProperties {
  std::string name;  // e.g. "NVIDIA H200"
  int major = 0, minor = 0;  // compute capability
  int multi_processor_count = 0;
  size_t total_memory = 0;  // bytes
};
// The properties of `device` (-1: the current device). Throws without a device.
DeviceProperties get_device_properties(int device = -1);

}  // namespace gr::cuda

namespace gr {

// A copy of CPU tensor `t` in page-locked memory (t itself when it already is), without
// autograd history. Host-to-device copies from such memory are asynchronous; see Note
// [Pinned copies] in cuda_kernels/pinned.h. Throws without a CUDA device.
Tensor pin_memory(const Tensor& t);
// Whether t's memory is page-locked (false on a machine or build without CUDA).
bool is_pinned(const Tensor& t);
// A new contiguous CPU tensor in pinned memory. Throws without a CUDA device.
Tensor empty_pinned(IntArrayRef sizes, ScalarType dtype);

}  // namespace gr

namespace gr::detail {

// What the CUDA backend provides; installed once by it, before cuda_device_count() returns.
class CudaHooks {
 public:
  virtual ~CudaHooks() = default;
  virtual BlockPoolStats memory_stats(int device) = 0;
  virtual void reset_peak_memory_stats(int device) = 0;
  virtual void empty_cache() = 0;
  virtual BlockPoolStats pinned_memory_stats() = 0;
  virtual DataPtr allocate_pinned(size_t nbytes) = 0;
  virtual bool is_pinned(const void* ptr) = 0;
  virtual void synchronize(int device) = 0;
  virtual void set_device(int device) = 0;
  virtual int current_device() = 0;
  virtual cuda::DeviceProperties device_properties(int device) = 0;
};
void set_cuda_hooks(CudaHooks* hooks);

}  // namespace gr::detail
