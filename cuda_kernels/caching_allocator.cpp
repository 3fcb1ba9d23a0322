// The caching device allocator: BlockPool bookkeeping (core/block_pool.h) over cudaMalloc,
// cudaFree and pooled events, one pool per device; and the CudaHooks of core/cuda_memory.h.
#include "cuda_kernels/caching_allocator.h"

#include <cstdio>
#include <memory>
#include <vector>

#include "core/error.h"
#include "core/version.h"
#include "cuda_kernels/cuda_check.h"
#include "cuda_kernels/event.h"
#include "cuda_kernels/pinned.h"
#include "cuda_kernels/runtime.h"

namespace gr::cuda {

namespace {

double mib(size_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

class DeviceBackend final : public detail::StreamEventBackend {
 public:
  explicit DeviceBackend(int device) : device_(device) {}

  void* raw_alloc(size_t bytes) override {
    DeviceGuard guard(device_);
    void* p = nullptr;
    const cudaError_t err = cudaMalloc(&p, bytes);
    if (err == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();  // not sticky: clear it, the pool retries or reports
      return nullptr;
    }
    GR_CUDA_CHECK(err);
    return p;
  }

  // Runs from empty_cache() or an OOM retry; never throws.
  void raw_free(void* p) noexcept override {
    int previous = -1;
    if (cudaGetDevice(&previous) == cudaSuccess && previous != device_) cudaSetDevice(device_);
    note_host_sync();  // cudaFree waits for the device
    const cudaError_t err = cudaFree(p);
    if (previous >= 0 && previous != device_) cudaSetDevice(previous);
    if (err != cudaSuccess && err != cudaErrorCudartUnloading)
      std::fprintf(stderr, "gradring: cudaFree on cuda:%d failed: %s\n", device_, cudaGetErrorString(err));
  }

 private:
  int device_;
};

struct DevicePool {
  explicit DevicePool(int device) : backend(device), pool(&backend) {}
  DeviceBackend backend;
  BlockPool pool;
};

class CachingAllocator final : public Allocator {
 public:
  // The count comes from the runtime directly: this runs inside initialize_backend(), that is
  // inside cuda_device_count()'s first call.
  CachingAllocator() {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
      (void)cudaGetLastError();
      count = 0;
    }
    for (int d = 0; d < count; ++d) pools_.push_back(std::make_unique<DevicePool>(d));
  }

  DataPtr allocate(size_t nbytes, Device device) override {
    const int count = cuda_device_count();
    GR_CHECK(device.is_cuda() && device.index() >= 0 && device.index() < count, "cannot allocate on ", device, ": ",
             count, " CUDA device(s) visible");
    if (nbytes == 0) return {nullptr, [](void*) {}};
    BlockPool& pool = this->pool(device.index());
    const cudaStream_t stream = Stream::current(device.index()).handle();
    void* p = pool.allocate(nbytes, reinterpret_cast<uintptr_t>(stream));
    if (!p) {
      size_t free_bytes = 0, total_bytes = 0;
      {
        DeviceGuard guard(device.index());
        if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) (void)cudaGetLastError();
      }
      GR_ERROR("CUDA out of memory on ", device, ": ", describe_allocation_failure(nbytes, pool.stats()), "; ",
               mib(free_bytes), " MiB free of ", mib(total_bytes),
               " MiB on the device (the cache was already emptied and the allocation retried)");
    }
    return {p, [&pool](void* q) {
              try {
                pool.free(q);
              } catch (const std::exception& e) {  // a deleter must not throw
                std::fprintf(stderr, "gradring: freeing CUDA memory failed: %s\n", e.what());
              }
            }};
  }

  BlockPool& pool(int device) {
    const int d = device < 0 ? current_device() : device;
    GR_CHECK(d >= 0 && d < static_cast<int>(pools_.size()), "CUDA allocator: no CUDA device ", d, " (",
             pools_.size(), " visible)");
    return pools_[static_cast<size_t>(d)]->pool;
  }

  void empty_cache() {
    for (auto& p : pools_) p->pool.empty_cache();
  }

 private:
  std::vector<std::unique_ptr<DevicePool>> pools_;
};

// Never destroyed: tensors in static objects may be freed after main() returns.
CachingAllocator& the_allocator() {
  static auto* instance = new CachingAllocator;
  return *instance;
}

class Hooks final : public gr::detail::CudaHooks {
 public:
  BlockPoolStats memory_stats(int device) override { return device_memory_stats(device); }
  void reset_peak_memory_stats(int device) override { reset_device_peak_stats(device); }
  void empty_cache() override {
    empty_device_cache();
    empty_pinned_cache();
  }
  BlockPoolStats pinned_memory_stats() override { return pinned_stats(); }
  DataPtr allocate_pinned(size_t nbytes) override { return cuda::allocate_pinned(nbytes); }
  bool is_pinned(const void* ptr) override { return is_pinned_ptr(ptr); }
  void set_device(int device) override { set_current_device(device); }
  int current_device() override { return get_device(); }
  void synchronize(int device) override {
    DeviceGuard guard(device < 0 ? current_device() : device);
    note_host_sync();
    GR_CUDA_CHECK(cudaDeviceSynchronize());
  }
  DeviceProperties device_properties(int device) override {
    cudaDeviceProp p{};
    GR_CUDA_CHECK(cudaGetDeviceProperties(&p, device));
    return {p.name, p.major, p.minor, p.multiProcessorCount, p.totalGlobalMem};
  }
};

}  // namespace

Allocator* device_allocator() { return &the_allocator(); }

BlockPoolStats device_memory_stats(int device) { return the_allocator().pool(device).stats(); }
void reset_device_peak_stats(int device) { the_allocator().pool(device).reset_peak_stats(); }
void empty_device_cache() { the_allocator().empty_cache(); }

void record_stream(const Tensor& t, const Stream& stream) {
  GR_CHECK(t.defined() && t.is_cuda(), "record_stream: expected a CUDA tensor, got ",
           t.defined() ? t.device().str() : std::string("an undefined tensor"));
  GR_CHECK(stream.device() == t.device().index(), "record_stream: tensor on ", t.device(), " but the stream is on cuda:",
           stream.device());
  const void* data = t.storage().data();
  if (!data) return;  // no memory (0 elements)
  GR_CHECK(the_allocator().pool(t.device().index()).record_stream(data, reinterpret_cast<uintptr_t>(stream.handle())),
           "record_stream: the tensor's memory does not come from gradring's CUDA allocator (from_blob?)");
}

gr::detail::CudaHooks* cuda_hooks() {
  static auto* hooks = new Hooks;  // never destroyed, like the allocators it forwards to
  return hooks;
}

}  // namespace gr::cuda
