// Memory allocation per device type: the CPU allocator, and a slot the CUDA backend fills.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "core/device.h"

namespace gr {

// Owned device memory: the pointer and how to give it back.
struct DataPtr {
  void* ptr = nullptr;
  std::function<void(void*)> deleter;
};

class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual DataPtr allocate(size_t nbytes, Device device) = 0;
};

// CPU memory is 64-byte aligned so vector loops can use aligned loads. Blocks of 64 KiB
// and more are cached after use (free lists per rounded size, up to a cap), so a training
// loop reuses its buffers instead of asking the OS for fresh, page-faulting memory.
Allocator* cpu_allocator();

struct CpuCacheStats {
  size_t cached_bytes = 0;      // held in free lists now
  size_t cache_limit = 0;       // GRADRING_CPU_CACHE_MB (default 2048 MiB; 0 disables)
  uint64_t hits = 0, misses = 0;
};
CpuCacheStats cpu_cache_stats();
// Returns every cached CPU block to the system.
void cpu_empty_cache();
// The allocator for a device type; throws if that backend is not available.
Allocator* get_allocator(DeviceType type);
void set_allocator(DeviceType type, Allocator* allocator);

}  // namespace gr
