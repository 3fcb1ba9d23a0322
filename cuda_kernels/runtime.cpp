// Device discovery and selection, the current stream, launch sizes, and the backend's
// registration (allocator and the core's CudaHooks).
#include "cuda_kernels/runtime.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <vector>

#include "core/dispatch.h"
#include "core/error.h"
#include "core/version.h"
#include "cuda_kernels/caching_allocator.h"
#include "cuda_kernels/cuda_check.h"
#include "cuda_kernels/stream.h"

namespace gr::cuda {

namespace {
std::vector<int> g_sm_counts;  // per device, written once by initialize_backend()
std::atomic<uint64_t> g_host_syncs{0};  // Note [Host synchronisations]

// What core's dispatch uses to run each kernel call on its tensors' device (DispatchStub's
// operator() for a Device; detail::CudaDeviceScope in core/dispatch.h).
int enter_device(int index) {
  const int previous = get_device();
  if (previous != index) GR_CUDA_CHECK(cudaSetDevice(index));
  return previous;
}
void leave_device(int previous) noexcept {
  if (cudaSetDevice(previous) != cudaSuccess) cudaGetLastError();  // a destructor must not throw
}
constexpr gr::detail::CudaDeviceSwitch kDeviceSwitch{&enter_device, &leave_device};
}  // namespace

int initialize_backend() {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver) {
    cudaGetLastError();
    return 0;
  }
  if (err != cudaSuccess) {
    // A broken driver should not take the CPU path down with it: say why, then run on CPU.
    cudaGetLastError();
    std::fprintf(stderr, "gradring: CUDA is unusable (%s: %s)\n", cudaGetErrorName(err), cudaGetErrorString(err));
    return 0;
  }
  g_sm_counts.assign(static_cast<size_t>(count), 1);
  for (int d = 0; d < count; ++d)
    GR_CUDA_CHECK(cudaDeviceGetAttribute(&g_sm_counts[static_cast<size_t>(d)], cudaDevAttrMultiProcessorCount, d));
  if (count > 0) {
    set_allocator(kCUDA, device_allocator());
    gr::detail::set_cuda_hooks(cuda_hooks());
    gr::detail::g_cuda_device_switch.store(&kDeviceSwitch, std::memory_order_release);
  }
  return count;
}

int get_device() {
  int device = 0;
  GR_CUDA_CHECK(cudaGetDevice(&device));
  return device;
}

void set_current_device(int index) {
  const int count = cuda_device_count();
  GR_CHECK(index >= 0 && index < count, "set_device: no CUDA device ", index, " (", count, " visible)");
  GR_CUDA_CHECK(cudaSetDevice(index));
}

DeviceGuard::DeviceGuard(int index) {
  int current = get_device();
  if (current != index) {
    GR_CUDA_CHECK(cudaSetDevice(index));
    previous_ = current;
  }
}

DeviceGuard::~DeviceGuard() {
  if (previous_ >= 0) cudaSetDevice(previous_);  // a destructor must not throw
}

cudaStream_t current_stream() { return Stream::current().handle(); }

void set_current_stream(cudaStream_t stream) {
  if (!stream) {
    Stream::set_current(Stream::thread_default());
    return;
  }
  int device = -1;
  GR_CUDA_CHECK(cudaStreamGetDevice(stream, &device));
  Stream::set_current(Stream(stream, device));
}

void note_host_sync() noexcept { g_host_syncs.fetch_add(1, std::memory_order_relaxed); }
uint64_t host_sync_count() noexcept { return g_host_syncs.load(std::memory_order_relaxed); }

unsigned grid_size(int64_t n, int threads) {
  const int device = current_device();
  const int sms = device < static_cast<int>(g_sm_counts.size()) ? g_sm_counts[static_cast<size_t>(device)] : 1;
  // 32 blocks of 256 threads per SM covers the resident-thread limit of every current GPU.
  const int64_t cap = static_cast<int64_t>(sms) * 32;
  const int64_t needed = (n + threads - 1) / threads;
  return static_cast<unsigned>(std::max<int64_t>(1, std::min(needed, cap)));
}

}  // namespace gr::cuda
