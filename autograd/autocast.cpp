// Autocast's thread-local state, the guard and the cast cache. See Note [Autocast].
#include "autograd/autocast.h"

#include <array>
#include <unordered_map>
#include <utility>

#include "autograd/grad_mode.h"

namespace gr::autocast {
namespace {

thread_local std::array<bool, kNumDeviceTypes> t_enabled{};
thread_local std::array<ScalarType, kNumDeviceTypes> t_dtype{kBFloat16, kFloat16};  // PyTorch's defaults
thread_local bool t_cache_enabled = true;
thread_local int t_nesting = 0;
// Source TensorImpl -> (the source, kept alive so the key stays unique; its cast).
thread_local std::unordered_map<const TensorImpl*, std::pair<Tensor, Tensor>> t_cache;

size_t index(DeviceType d) { return static_cast<size_t>(d); }

}  // namespace

bool is_autocast_available(DeviceType device_type) { return device_type == kCPU || device_type == kCUDA; }

bool is_autocast_enabled(DeviceType device_type) { return t_enabled[index(device_type)]; }

void set_autocast_enabled(DeviceType device_type, bool enabled) {
  GR_CHECK(!enabled || is_autocast_available(device_type),
           "set_autocast_enabled: autocast is not implemented for this device type");
  t_enabled[index(device_type)] = enabled;
}

ScalarType get_autocast_dtype(DeviceType device_type) { return t_dtype[index(device_type)]; }

void set_autocast_dtype(DeviceType device_type, ScalarType dtype) {
  // PyTorch's autocast supports bfloat16 and float16, on the CPU and on CUDA.
  GR_CHECK(is_reduced_float(dtype), "set_autocast_dtype: the autocast dtype must be bfloat16 or float16, got ", dtype);
  t_dtype[index(device_type)] = dtype;
}

void clear_cache() { t_cache.clear(); }
int increment_nesting() { return ++t_nesting; }
int decrement_nesting() { return --t_nesting; }
bool is_autocast_cache_enabled() { return t_cache_enabled; }
void set_autocast_cache_enabled(bool enabled) { t_cache_enabled = enabled; }

AutocastGuard::AutocastGuard(DeviceType device_type, ScalarType dtype, bool enabled, bool cache_enabled)
    : device_type_(device_type),
      prev_enabled_(is_autocast_enabled(device_type)),
      prev_cache_enabled_(is_autocast_cache_enabled()),
      prev_dtype_(get_autocast_dtype(device_type)) {
  set_autocast_dtype(device_type, dtype);
  try {
    set_autocast_enabled(device_type, enabled);
  } catch (...) {  // an unavailable device type: leave the state as it was
    t_dtype[index(device_type)] = prev_dtype_;
    throw;
  }
  set_autocast_cache_enabled(cache_enabled);
  increment_nesting();
}

AutocastGuard::~AutocastGuard() {
  if (decrement_nesting() == 0) clear_cache();
  t_enabled[index(device_type_)] = prev_enabled_;
  t_dtype[index(device_type_)] = prev_dtype_;
  t_cache_enabled = prev_cache_enabled_;
}

Tensor cached_cast(ScalarType to_type, const Tensor& arg, DeviceType device_type) {
  if (!arg.defined() || arg.device().type() != device_type || !arg.is_floating_point() ||
      arg.scalar_type() == kFloat64 || arg.scalar_type() == to_type)
    return arg;
  // A cast made without grad mode has no history: caching it would cut the gradient of a
  // later use under grad mode, so only casts with history are kept.
  const bool cacheable = t_cache_enabled && GradMode::is_enabled() && to_type == get_autocast_dtype(device_type) &&
                         arg.scalar_type() == kFloat32 && arg.requires_grad() && arg.is_leaf() &&
                         !(arg.unsafe_impl()->autograd && arg.unsafe_impl()->autograd->is_view);
  if (!cacheable) return arg.to(to_type);
  auto it = t_cache.find(arg.unsafe_impl());
  if (it != t_cache.end()) return it->second.second;
  Tensor cast = arg.to(to_type);
  t_cache.emplace(arg.unsafe_impl(), std::make_pair(arg, cast));
  return cast;
}

namespace detail {

bool any_enabled() {
  for (bool e : t_enabled)
    if (e) return true;
  return false;
}

ExcludeGuard::ExcludeGuard(DeviceType device_type)
    : device_type_(device_type), prev_(t_enabled[index(device_type)]) {
  t_enabled[index(device_type)] = false;
}
ExcludeGuard::~ExcludeGuard() { t_enabled[index(device_type_)] = prev_; }

}  // namespace detail
}  // namespace gr::autocast
