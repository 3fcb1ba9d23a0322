// DispatchStub: one function-pointer slot per device type for a primitive kernel. The CPU
// slot is filled next to the CPU code, the CUDA slot by the CUDA backend's registration.
#pragma once

#include <array>
#include <atomic>
#include <string>
#include <string_view>
#include <vector>

#include "core/device.h"
#include "core/error.h"
#include "core/profiler.h"

namespace gr {

namespace detail {
// Installed by the CUDA backend: make CUDA device `index` current, returning the previous
// one (enter), and make it current again (leave, never throws).
struct CudaDeviceSwitch {
  int (*enter)(int index);
  void (*leave)(int previous) noexcept;
};
inline std::atomic<const CudaDeviceSwitch*> g_cuda_device_switch{nullptr};

// For one kernel call on a CUDA tensor: its device is current (kernels, the current stream
// and launch sizes all follow the current device), and the caller's device comes back after.
class CudaDeviceScope {
 public:
  explicit CudaDeviceScope(int index) : switch_(g_cuda_device_switch.load(std::memory_order_acquire)) {
    if (switch_) previous_ = switch_->enter(index);
    if (previous_ == index) switch_ = nullptr;  // already current: nothing to restore
  }
  ~CudaDeviceScope() {
    if (switch_) switch_->leave(previous_);
  }
  CudaDeviceScope(const CudaDeviceScope&) = delete;
  CudaDeviceScope& operator=(const CudaDeviceScope&) = delete;

 private:
  const CudaDeviceSwitch* switch_;
  int previous_ = -1;
};
}  // namespace detail

template <class Fn>
class DispatchStub;

template <class R, class... Args>
class DispatchStub<R (*)(Args...)> {
 public:
  using Fn = R (*)(Args...);
  // constexpr: stubs are constant-initialised, so registrars in other files may run first.
  constexpr explicit DispatchStub(const char* name) : name_(name) {}

  R operator()(DeviceType device, Args... args) const {
    Fn fn = table_[static_cast<int>(device)];
    GR_CHECK(fn != nullptr, name_, ": no kernel registered for device type ", Device(device).str());
    if (profiler::enabled()) [[unlikely]] {
      profiler::ScopedEvent span(name_, "kernel");
      return fn(std::forward<Args>(args)...);
    }
    return fn(std::forward<Args>(args)...);
  }
  // The same for the tensors' device: a CUDA device is made current for the call.
  R operator()(const Device& device, Args... args) const {
    if (device.is_cuda()) {
      detail::CudaDeviceScope scope(device.index());
      return (*this)(device.type(), std::forward<Args>(args)...);
    }
    return (*this)(device.type(), std::forward<Args>(args)...);
  }
  void set(DeviceType device, Fn fn) { table_[static_cast<int>(device)] = fn; }
  bool has(DeviceType device) const { return table_[static_cast<int>(device)] != nullptr; }
  const char* name() const { return name_; }

 private:
  const char* name_;
  std::array<Fn, kNumDeviceTypes> table_{};
};

namespace detail {
// Remembers that `stub` has a kernel for `device` (kernel_registered).
void note_kernel(const char* stub, DeviceType device);
}  // namespace detail

// Whether the stub named `stub` has a kernel registered for `device` in this build: what
// docs/ops.md's CUDA column is computed from (tests/autograd/test_ops_table.cpp).
bool kernel_registered(std::string_view stub, DeviceType device);
// Whether any kernel is registered for `device` (false for CUDA in a build without it).
bool any_kernel_registered(DeviceType device);
// The names of the stubs with a kernel for `device` (tests/cuda/test_dispatch_coverage.cpp
// checks that every CPU kernel has a CUDA one).
std::vector<std::string> registered_stubs(DeviceType device);

// Registers `fn` for `device` at static-initialisation time, next to the kernel's code.
template <class Stub, class Fn>
struct KernelRegistrar {
  KernelRegistrar(Stub& stub, DeviceType device, Fn fn) {
    stub.set(device, fn);
    detail::note_kernel(stub.name(), device);
  }
};

}  // namespace gr

#define GR_DECLARE_DISPATCH(fn_type, stub) extern ::gr::DispatchStub<fn_type> stub
#define GR_DEFINE_DISPATCH(fn_type, stub) ::gr::DispatchStub<fn_type> stub(#stub)
#define GR_REGISTER_KERNEL_IMPL2(stub, device, fn, line) \
  static ::gr::KernelRegistrar gr_registrar_##line(stub, device, fn)
#define GR_REGISTER_KERNEL_IMPL(stub, device, fn, line) GR_REGISTER_KERNEL_IMPL2(stub, device, fn, line)
#define GR_REGISTER_KERNEL(stub, device, fn) GR_REGISTER_KERNEL_IMPL(stub, device, fn, __LINE__)
