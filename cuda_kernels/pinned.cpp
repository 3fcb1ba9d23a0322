// The pinned host allocator: cudaHostAlloc segments under a BlockPool, with events recorded
// on the streams that copied from a block. See Note [Pinned copies].
#include "cuda_kernels/pinned.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "core/error.h"
#include "cuda_kernels/cuda_check.h"
#include "cuda_kernels/event.h"
#include "cuda_kernels/runtime.h"

namespace gr::cuda {

namespace {

// Host blocks are not allocated "on" a stream: one key for all of them that no real stream
// handle equals, so every copy stream is recorded as a use.
constexpr uintptr_t kHostStream = UINTPTR_MAX;

class PinnedBackend final : public detail::StreamEventBackend {
 public:
  void* raw_alloc(size_t bytes) override {
    void* p = nullptr;
    // Portable: page-locked for every device of the process, not only the current one.
    const cudaError_t err = cudaHostAlloc(&p, bytes, cudaHostAllocPortable);
    if (err == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      return nullptr;
    }
    GR_CUDA_CHECK(err);
    return p;
  }
  void raw_free(void* ptr) noexcept override {
    const cudaError_t err = cudaFreeHost(ptr);
    if (err != cudaSuccess && err != cudaErrorCudartUnloading)
      std::fprintf(stderr, "gradring: cudaFreeHost failed: %s\n", cudaGetErrorString(err));
  }
};

// Leaked on purpose: pinned tensors may be freed by static objects after main() returns.
BlockPool& pool() {
  static auto* instance = new BlockPool(new PinnedBackend);
  return *instance;
}

}  // namespace

DataPtr allocate_pinned(size_t nbytes) {
  if (nbytes == 0) return {nullptr, [](void*) {}};
  void* p = pool().allocate(nbytes, kHostStream);
  if (!p)
    GR_ERROR("out of page-locked host memory: ", describe_allocation_failure(nbytes, pool().stats()),
             " (pinned); use pageable memory (no pin_memory) or smaller batches");
  return {p, [](void* q) {
            try {
              pool().free(q);
            } catch (const std::exception& e) {  // a deleter must not throw
              std::fprintf(stderr, "gradring: freeing pinned memory failed: %s\n", e.what());
            }
          }};
}

bool is_pinned_ptr(const void* ptr) {
  if (!ptr) return false;
  if (pool().owns(ptr)) return true;
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, ptr) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return attr.type == cudaMemoryTypeHost;
}

bool record_pinned_use(const void* ptr, cudaStream_t stream) {
  return pool().record_stream(ptr, reinterpret_cast<uintptr_t>(stream));
}

BlockPoolStats pinned_stats() { return pool().stats(); }
void empty_pinned_cache() { pool().empty_cache(); }

}  // namespace gr::cuda
