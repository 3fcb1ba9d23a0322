// The CPU side of the CUDA memory API: forwards to the backend's hooks when there is a device.
#include "core/cuda_memory.h"

#include <atomic>

#include "core/factory.h"
#include "core/native/copy.h"
#include "core/version.h"

namespace gr {

namespace {
std::atomic<detail::CudaHooks*> g_hooks{nullptr};

// The hooks, or nullptr without a device. cuda_device_count() starts the backend first.
detail::CudaHooks* hooks() { return cuda_device_count() > 0 ? g_hooks.load(std::memory_order_acquire) : nullptr; }

detail::CudaHooks* required_hooks(const char* op) {
  detail::CudaHooks* h = hooks();
  GR_CHECK(h != nullptr, op, ": page-locked memory needs a CUDA device, and ",
           built_with_cuda() ? "no CUDA device was found" : "this build has no CUDA backend (configure with -DGRADRING_CUDA=ON)");
  return h;
}
}  // namespace

void detail::set_cuda_hooks(CudaHooks* h) { g_hooks.store(h, std::memory_order_release); }

cuda::MemoryStats cuda::memory_stats(int device) {
  detail::CudaHooks* h = hooks();
  return h ? h->memory_stats(device) : MemoryStats{};
}

void cuda::reset_peak_memory_stats(int device) {
  if (detail::CudaHooks* h = hooks()) h->reset_peak_memory_stats(device);
}

void cuda::empty_cache() {
  if (detail::CudaHooks* h = hooks()) h->empty_cache();
}

void cuda::synchronize(int device) {
  if (detail::CudaHooks* h = hooks()) h->synchronize(device);
}

void cuda::set_device(int device) {
  GR_CHECK(device >= 0 && device < cuda_device_count(), "cuda::set_device(", device, "): ", cuda_device_count(),
           " CUDA device(s) visible", built_with_cuda() ? "" : " (this build has no CUDA backend)");
  hooks()->set_device(device);
}

int cuda::current_device() {
  detail::CudaHooks* h = hooks();
  GR_CHECK(h != nullptr, "cuda::current_device(): ",
           built_with_cuda() ? "no CUDA device was found" : "this build has no CUDA backend (configure with -DGRADRING_CUDA=ON)");
  return h->current_device();
}

cuda::DeviceProperties cuda::get_device_properties(int device) {
  detail::CudaHooks* h = hooks();
  GR_CHECK(h != nullptr, "cuda::get_device_properties(): ",
           built_with_cuda() ? "no CUDA device was found" : "this build has no CUDA backend (configure with -DGRADRING_CUDA=ON)");
  GR_CHECK(device >= -1 && device < cuda_device_count(), "cuda::get_device_properties(", device, "): ",
           cuda_device_count(), " CUDA device(s) visible");
  return h->device_properties(device < 0 ? h->current_device() : device);
}

Tensor Tensor::cuda() const { return to(Device(kCUDA, cuda::current_device())); }

cuda::MemoryStats cuda::pinned_memory_stats() {
  detail::CudaHooks* h = hooks();
  return h ? h->pinned_memory_stats() : MemoryStats{};
}

Tensor empty_pinned(IntArrayRef sizes, ScalarType dtype) {
  detail::CudaHooks* h = required_hooks("empty_pinned");
  int64_t numel = 1;
  for (int64_t s : sizes) {
    GR_CHECK(s >= 0, "empty_pinned: negative size in ", sizes);
    numel *= s;
  }
  if (numel == 0) return empty(sizes, TensorOptions(dtype));
  DataPtr d = h->allocate_pinned(static_cast<size_t>(numel) * element_size(dtype));
  return from_blob(d.ptr, sizes, std::move(d.deleter), TensorOptions(dtype));
}

Tensor pin_memory(const Tensor& t) {
  GR_CHECK(t.defined(), "pin_memory: undefined tensor");
  GR_CHECK(t.is_cpu(), "pin_memory: only CPU tensors can be pinned, got one on ", t.device());
  required_hooks("pin_memory");
  if (is_pinned(t)) return t;
  Tensor out = empty_pinned(t.sizes(), t.scalar_type());
  native::copy_(out, t.detach());
  return out;
}

bool is_pinned(const Tensor& t) {
  if (!t.defined() || !t.is_cpu() || t.storage().data() == nullptr) return false;
  detail::CudaHooks* h = hooks();
  return h && h->is_pinned(t.storage().data());
}

}  // namespace gr
