// CPU allocator (aligned, with a cache of large blocks) and the per-device-type allocator table.
#include "core/allocator.h"

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

#include "core/error.h"
#include "core/memory_stats.h"
#include "core/version.h"

namespace gr {

namespace {

constexpr size_t kCacheMinBytes = 64 << 10;  // smaller blocks: malloc is fast enough
constexpr size_t kPage = 4096;

size_t cache_limit_from_env() {
  const char* env = std::getenv("GRADRING_CPU_CACHE_MB");
  if (!env || !*env) return size_t{2048} << 20;
  char* end = nullptr;
  unsigned long long mb = std::strtoull(env, &end, 10);
  GR_CHECK(end && *end == '\0', "GRADRING_CPU_CACHE_MB must be a whole number of MiB, got '", env, "'");
  return static_cast<size_t>(mb) << 20;
}

class CpuAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes, Device) override {
    if (nbytes == 0) return {nullptr, [](void*) {}};
    if (nbytes < kCacheMinBytes || limit_ == 0) {
      const size_t rounded = (nbytes + 63) / 64 * 64;
      void* p = std::aligned_alloc(64, rounded);
      GR_CHECK(p != nullptr, "out of CPU memory allocating ", nbytes, " bytes");
      count(static_cast<int64_t>(rounded));
      return {p, [this, rounded](void* q) {
                count(-static_cast<int64_t>(rounded));
                std::free(q);
              }};
    }
    size_t rounded = (nbytes + kPage - 1) / kPage * kPage;
    void* p = take(rounded);
    if (!p) {
      p = std::aligned_alloc(kPage, rounded);
      if (!p) {  // give the cache back to the system and try once more
        cpu_empty_cache();
        p = std::aligned_alloc(kPage, rounded);
      }
      GR_CHECK(p != nullptr, "out of CPU memory allocating ", nbytes, " bytes");
    }
    count(static_cast<int64_t>(rounded));
    return {p, [this, rounded](void* q) {
              count(-static_cast<int64_t>(rounded));
              give_back(q, rounded);
            }};
  }

  CpuMemoryStats memory_stats() const {
    return {allocated_.load(std::memory_order_relaxed), peak_.load(std::memory_order_relaxed)};
  }
  void reset_peak() { peak_.store(allocated_.load(std::memory_order_relaxed), std::memory_order_relaxed); }

  CpuCacheStats stats() {
    std::lock_guard lock(mutex_);
    return {cached_, limit_, hits_, misses_};
  }

  void empty() {
    std::lock_guard lock(mutex_);
    for (auto& [size, blocks] : free_)
      for (void* p : blocks) std::free(p);
    free_.clear();
    cached_ = 0;
  }

 private:
  // Bytes handed out: one relaxed atomic add per allocation and per free (no lock); the peak
  // is raised by whoever passes it.
  void count(int64_t delta) {
    const int64_t now = allocated_.fetch_add(delta, std::memory_order_relaxed) + delta;
    int64_t peak = peak_.load(std::memory_order_relaxed);
    while (now > peak && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
    }
  }

  void* take(size_t size) {
    std::lock_guard lock(mutex_);
    auto it = free_.find(size);
    if (it == free_.end() || it->second.empty()) {
      ++misses_;
      return nullptr;
    }
    ++hits_;
    void* p = it->second.back();
    it->second.pop_back();
    cached_ -= size;
    return p;
  }

  void give_back(void* p, size_t size) {
    {
      std::lock_guard lock(mutex_);
      if (cached_ + size <= limit_) {
        free_[size].push_back(p);
        cached_ += size;
        return;
      }
    }
    std::free(p);
  }

  std::mutex mutex_;
  std::unordered_map<size_t, std::vector<void*>> free_;
  size_t cached_ = 0;
  size_t limit_ = cache_limit_from_env();
  uint64_t hits_ = 0, misses_ = 0;
  std::atomic<int64_t> allocated_{0}, peak_{0};
};

CpuAllocator* the_cpu_allocator() {
  // Never destroyed: tensors in other static objects may be freed after main() returns.
  static CpuAllocator* instance = new CpuAllocator;
  return instance;
}

Allocator* g_allocators[kNumDeviceTypes] = {the_cpu_allocator(), nullptr};

}  // namespace

Allocator* cpu_allocator() { return the_cpu_allocator(); }
CpuCacheStats cpu_cache_stats() { return the_cpu_allocator()->stats(); }
void cpu_empty_cache() { the_cpu_allocator()->empty(); }
CpuMemoryStats cpu_memory_stats() { return the_cpu_allocator()->memory_stats(); }
void reset_cpu_peak_memory_stats() { the_cpu_allocator()->reset_peak(); }

Allocator* get_allocator(DeviceType type) {
  Allocator* a = g_allocators[static_cast<int>(type)];
  // The CUDA backend registers itself on first use; a program's first CUDA tensor starts it.
  if (!a && type == kCUDA && cuda_device_count() > 0) a = g_allocators[static_cast<int>(type)];
  GR_CHECK(a != nullptr, "cannot create a tensor on ", Device(type).str(), ": ",
           built_with_cuda() ? "no CUDA device was found"
                             : "this build has no CUDA backend (configure with -DGRADRING_CUDA=ON)");
  return a;
}

void set_allocator(DeviceType type, Allocator* allocator) { g_allocators[static_cast<int>(type)] = allocator; }

}  // namespace gr
