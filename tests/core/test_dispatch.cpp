// DispatchStub: the slot per device type, the error for a missing kernel, and the CUDA
// device scope around a kernel call on a given device (with a fake device switch standing
// in for the CUDA backend, so it runs without a GPU).
#include <doctest/doctest.h>

#include <vector>

#include "core/dispatch.h"

using namespace gr;

namespace {

int g_current = 0;             // the fake "current CUDA device"
std::vector<int> g_seen;       // the current device each fake kernel call ran on
std::vector<int> g_left;       // devices restored by leave()

int fake_enter(int index) {
  const int previous = g_current;
  g_current = index;
  return previous;
}
void fake_leave(int previous) noexcept {
  g_left.push_back(previous);
  g_current = previous;
}
constexpr detail::CudaDeviceSwitch kFakeSwitch{&fake_enter, &fake_leave};

using KernelFn = int (*)(int);
DispatchStub<KernelFn> test_stub("test_stub");
int cpu_kernel(int x) { return x + 1; }
int cuda_kernel(int x) {
  g_seen.push_back(g_current);
  return x + 2;
}

}  // namespace

TEST_CASE("DispatchStub: per-device slots, a clear error without a kernel, the CUDA device made current") {
  CHECK_THROWS_WITH_AS(test_stub(kCPU, 1), doctest::Contains("test_stub: no kernel registered for device type cpu"),
                       gr::Error);
  test_stub.set(kCPU, &cpu_kernel);
  test_stub.set(kCUDA, &cuda_kernel);
  CHECK(test_stub.has(kCPU));
  CHECK(test_stub(kCPU, 1) == 2);
  CHECK(test_stub(Device(kCPU), 1) == 2);

  const detail::CudaDeviceSwitch* saved = detail::g_cuda_device_switch.load();
  detail::g_cuda_device_switch.store(&kFakeSwitch);
  g_current = 0;
  g_seen.clear();
  g_left.clear();
  CHECK(test_stub(Device(kCUDA, 2), 1) == 3);  // runs on device 2, then device 0 is back
  CHECK(test_stub(Device(kCUDA, 0), 1) == 3);  // already current: nothing to switch back
  CHECK(g_seen == std::vector<int>{2, 0});
  CHECK(g_left == std::vector<int>{0});
  CHECK(g_current == 0);
  CHECK(test_stub(kCUDA, 1) == 3);  // by device type: the thread's current device, untouched
  CHECK(g_seen.back() == 0);
  detail::g_cuda_device_switch.store(saved);
}
