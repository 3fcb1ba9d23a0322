// The record of which dispatch stubs have a kernel for which device type.
#include "core/dispatch.h"

#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace gr {
namespace {
// A function-local static: registrars in other files run during static initialisation, in
// an order the linker picks, possibly before a namespace-scope object here is constructed.
struct KernelRecord {
  std::mutex mutex;
  std::vector<std::pair<std::string, DeviceType>> kernels;
};
KernelRecord& record() {
  static KernelRecord r;
  return r;
}
}  // namespace

void detail::note_kernel(const char* stub, DeviceType device) {
  auto& r = record();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.kernels.emplace_back(stub, device);
}

bool kernel_registered(std::string_view stub, DeviceType device) {
  auto& r = record();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const auto& [name, d] : r.kernels) {
    if (d == device && name == stub) return true;
  }
  return false;
}

bool any_kernel_registered(DeviceType device) {
  auto& r = record();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const auto& kernel : r.kernels) {
    if (kernel.second == device) return true;
  }
  return false;
}

std::vector<std::string> registered_stubs(DeviceType device) {
  auto& r = record();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<std::string> stubs;
  for (const auto& [name, d] : r.kernels) {
    if (d == device) stubs.push_back(name);
  }
  return stubs;
}

}  // namespace gr
