// Memory allocation per device type: the CPU allocator, and a slot the CUDA backend fills.
#pragma once

#include <cstddef>
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

// CPU memory is 64-byte aligned so vector loops can use aligned loads.
Allocator* cpu_allocator();
// The allocator for a device type; throws if that backend is not available.
Allocator* get_allocator(DeviceType type);
void set_allocator(DeviceType type, Allocator* allocator);

}  // namespace gr
