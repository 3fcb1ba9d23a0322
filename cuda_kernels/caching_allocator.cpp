// The CUDA device allocator: plain cudaMalloc/cudaFree on the tensor's device.
#include <cstdio>

#include "core/error.h"
#include "core/version.h"
#include "cuda_kernels/cuda_check.h"
#include "cuda_kernels/runtime.h"

namespace gr::cuda {

namespace {

double mib(size_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

// Runs from tensor destructors, possibly at exit after the runtime is gone: never throws.
void free_on_device(void* p, int index) noexcept {
  int previous = -1;
  if (cudaGetDevice(&previous) == cudaSuccess && previous != index) cudaSetDevice(index);
  cudaError_t err = cudaFree(p);
  if (previous >= 0 && previous != index) cudaSetDevice(previous);
  if (err != cudaSuccess && err != cudaErrorCudartUnloading)
    std::fprintf(stderr, "gradring: cudaFree on cuda:%d failed: %s\n", index, cudaGetErrorString(err));
}

class CudaAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes, Device device) override {
    const int count = cuda_device_count();
    GR_CHECK(device.is_cuda() && device.index >= 0 && device.index < count, "cannot allocate on ", device, ": ",
             count, " CUDA device(s) visible");
    if (nbytes == 0) return {nullptr, [](void*) {}};
    DeviceGuard guard(device.index);
    void* p = nullptr;
    cudaError_t err = cudaMalloc(&p, nbytes);
    if (err == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      size_t free_bytes = 0, total_bytes = 0;
      cudaMemGetInfo(&free_bytes, &total_bytes);
      GR_ERROR("CUDA out of memory: tried to allocate ", mib(nbytes), " MiB on ", device, " (", mib(free_bytes),
               " MiB free of ", mib(total_bytes), " MiB)");
    }
    GR_CUDA_CHECK(err);
    const int index = device.index;
    return {p, [index](void* q) { free_on_device(q, index); }};
  }
};

}  // namespace

Allocator* device_allocator() {
  static CudaAllocator instance;
  return &instance;
}

}  // namespace gr::cuda
