// Work buffers for the CPU convolution kernels that are called over and over with the same
// sizes (a training loop): kept per thread between calls, in numbered slots.
#pragma once

#include <cstdint>
#include <memory>

namespace gr::native {

// A work buffer of n elements. Up to 32 MiB it is the calling thread's buffer in `slot`
// (0 .. kSlots), kept between calls (fresh multi-MiB allocations come from mmap and cost a
// page fault per 4 KiB on every call); larger ones live only as long as this object. Each
// kernel uses its own slots: Winograd 0-4, the dense kernels 5-6.
template <class T>
class Workspace {
 public:
  static constexpr int kSlots = 8;
  Workspace(int slot, int64_t n) {
    if (n * static_cast<int64_t>(sizeof(T)) > (int64_t(32) << 20)) {
      own_ = std::make_unique_for_overwrite<T[]>(static_cast<size_t>(n));
      p_ = own_.get();
      return;
    }
    thread_local Kept kept[kSlots];
    Kept& k = kept[slot];
    if (k.n < n) k.p = std::make_unique_for_overwrite<T[]>(static_cast<size_t>(n)), k.n = n;
    p_ = k.p.get();
  }
  T* get() const { return p_; }

 private:
  struct Kept {
    std::unique_ptr<T[]> p;
    int64_t n = 0;
  };
  std::unique_ptr<T[]> own_;
  T* p_ = nullptr;
};

}  // namespace gr::native
