// CPU allocator (aligned) and the per-device-type allocator table.
#include "core/allocator.h"

#include <cstdlib>
#include <new>

#include "core/error.h"

namespace gr {

namespace {
class CpuAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes, Device) override {
    if (nbytes == 0) return {nullptr, [](void*) {}};
    size_t rounded = (nbytes + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, rounded);
    GR_CHECK(p != nullptr, "out of CPU memory allocating ", nbytes, " bytes");
    return {p, [](void* q) { std::free(q); }};
  }
};

Allocator* g_allocators[kNumDeviceTypes] = {cpu_allocator(), nullptr};
}  // namespace

Allocator* cpu_allocator() {
  static CpuAllocator instance;
  return &instance;
}

Allocator* get_allocator(DeviceType type) {
  Allocator* a = g_allocators[static_cast<int>(type)];
  GR_CHECK(a != nullptr, "no allocator for device type ", Device(type).str(),
           ": this build has no CUDA backend or no CUDA device was found");
  return a;
}

void set_allocator(DeviceType type, Allocator* allocator) { g_allocators[static_cast<int>(type)] = allocator; }

}  // namespace gr
