// Automatic mixed precision (at::autocast's API as gr::autocast): while enabled for a device
// type, the listed ops cast their floating inputs to the autocast dtype or up to float32.
#pragma once

#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "autograd/autocast_policy.h"
#include "core/device.h"
#include "core/dtype.h"
#include "core/tensor.h"

namespace gr::autocast {

// Note [Autocast]
// As PyTorch's autocast, thread-local state per device type: enabled (off by default), the
// lower-precision dtype (bfloat16 on the CPU, float16 on CUDA) and a cache of casts. An op
// takes part through a wrapper, one GR_AUTOCAST(op, args...) line at the top of its function,
// and its row in the policy table (autocast_policy.h, Note [Autocast policy table]) says per
// device what happens:
// - lower_precision_fp (linear, matmul, mm, bmm, addmm, baddbmm, addbmm, conv*, prelu,
//   scaled_dot_product_attention): float32 and float16 inputs become the autocast dtype;
//   the op computes in it (GEMMs accumulate in float32, Note [Reduced float math]).
// - fp32 (the losses, prod; on CUDA also layer_norm, group_norm, softmax, log_softmax):
//   bfloat16 and float16 inputs become float32.
// - none: the op runs as if it were not listed; banned: refused.
// Every other op runs in its inputs' promoted dtype: bf16 + float32 gives float32.
// Only floating tensors on the op's device (its first tensor's), float64 excepted, are
// cast, and the casts are Tensor::to, so gradients flow back to float32 master weights as
// float32. The wrapped op runs with autocast off for its device, as under PyTorch's
// ExcludeDispatchKeyGuard: composite ops cast once, at the outermost listed op. Backward
// runs with autocast off (the engine's guard): each backward op runs in the dtypes its
// forward chose. Casts of float32 leaves that require grad (parameters) are cached while
// grad mode is on, and the cache is cleared when the outermost AutocastGuard ends: a
// weight used twice in one forward is converted once. Autocast is available on the CPU and
// on CUDA.

bool is_autocast_available(DeviceType device_type);
bool is_autocast_enabled(DeviceType device_type);
void set_autocast_enabled(DeviceType device_type, bool enabled);
ScalarType get_autocast_dtype(DeviceType device_type);
void set_autocast_dtype(DeviceType device_type, ScalarType dtype);
void clear_cache();
int increment_nesting();
int decrement_nesting();
bool is_autocast_cache_enabled();
void set_autocast_cache_enabled(bool enabled);

// torch.autocast(device_type, dtype, enabled, cache_enabled) as a scope: sets the state for
// `device_type` and restores the previous one on destruction; the outermost guard clears
// the cast cache when it ends.
class AutocastGuard {
 public:
  AutocastGuard(DeviceType device_type, ScalarType dtype, bool enabled = true, bool cache_enabled = true);
  explicit AutocastGuard(DeviceType device_type, bool enabled = true)
      : AutocastGuard(device_type, get_autocast_dtype(device_type), enabled) {}
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  DeviceType device_type_;
  bool prev_enabled_, prev_cache_enabled_;
  ScalarType prev_dtype_;
};

// `arg` converted to `to_type` (through autograd) when it is a floating tensor on
// `device_type` other than float64, else `arg` itself. Casts of parameters are cached
// (Note [Autocast]).
Tensor cached_cast(ScalarType to_type, const Tensor& arg, DeviceType device_type);

namespace detail {

bool any_enabled();  // whether any device type has autocast on (the disabled fast path)

// Switches autocast off for one device type while a wrapped op runs.
class ExcludeGuard {
 public:
  explicit ExcludeGuard(DeviceType device_type);
  ~ExcludeGuard();
  ExcludeGuard(const ExcludeGuard&) = delete;
  ExcludeGuard& operator=(const ExcludeGuard&) = delete;

 private:
  DeviceType device_type_;
  bool prev_;
};

inline const Tensor* first_tensor(const Tensor& t) { return t.defined() ? &t : nullptr; }
inline const Tensor* first_tensor(const std::optional<Tensor>& t) { return t ? first_tensor(*t) : nullptr; }
inline const Tensor* first_tensor(const TensorList& ts) {
  for (const Tensor& t : ts)
    if (t.defined()) return &t;
  return nullptr;
}
template <class T>
const Tensor* first_tensor(const T&) {
  return nullptr;
}

// The device type whose autocast applies to an op with these arguments (that of its first
// tensor), when autocast is on there.
template <class... Args>
std::optional<DeviceType> active_device(const Args&... args) {
  if (!any_enabled()) return std::nullopt;
  const Tensor* first = nullptr;
  ((first = first ? first : first_tensor(args)), ...);
  if (first == nullptr || !is_autocast_enabled(first->device().type())) return std::nullopt;
  return first->device().type();
}

inline Tensor cast(ScalarType to, const Tensor& t, DeviceType d) { return cached_cast(to, t, d); }
inline std::optional<Tensor> cast(ScalarType to, const std::optional<Tensor>& t, DeviceType d) {
  return t ? std::optional<Tensor>(cached_cast(to, *t, d)) : std::nullopt;
}
inline TensorList cast(ScalarType to, const TensorList& ts, DeviceType d) {
  TensorList out;
  out.reserve(ts.size());
  for (const Tensor& t : ts) out.push_back(cached_cast(to, t, d));
  return out;
}
template <class T>
const T& cast(ScalarType, const T& arg, DeviceType) {
  return arg;
}

// Runs `op` on the arguments cast by `policy` (lower_precision_fp or fp32), with autocast
// off for `device_type`; refuses banned ops.
template <class Op, class... Args>
decltype(auto) redispatch(CastPolicy policy, std::string_view name, DeviceType device_type, Op op,
                          const Args&... args) {
  GR_CHECK(policy != CastPolicy::banned, name, " is unsafe to autocast on ", device_type == kCUDA ? "CUDA" : "the CPU",
           ". Many models use a sigmoid right before the binary cross entropy: combine the two with ",
           "binary_cross_entropy_with_logits, which is safe to autocast; or run this op with autocast disabled");
  const ScalarType to = policy == CastPolicy::fp32 ? kFloat32 : get_autocast_dtype(device_type);
  ExcludeGuard exclude(device_type);
  return op(cast(to, args, device_type)...);
}

// The policy of `op` where autocast is on for these arguments' device, else none.
template <class... Args>
std::pair<CastPolicy, DeviceType> active_policy(Op op, const Args&... args) {
  const std::optional<DeviceType> device = active_device(args...);
  if (!device) return {CastPolicy::none, kCPU};
  return {policy(op, *device), *device};
}

}  // namespace detail
}  // namespace gr::autocast

// The autocast wrapper of an op (Note [Autocast]): the first statement of `op`'s body, with
// `op`'s parameters in order; `op` names both the function and its row in the policy table.
// Returns op(cast arguments) when autocast is on for the op's device and the row's policy
// there is not none; otherwise nothing happens and the op runs as written.
#define GR_AUTOCAST(op, ...)                                                                               \
  if (const auto [gr_autocast_policy, gr_autocast_device] =                                                \
          ::gr::autocast::detail::active_policy(::gr::autocast::Op::op, __VA_ARGS__);                      \
      gr_autocast_policy != ::gr::autocast::CastPolicy::none)                                              \
  return ::gr::autocast::detail::redispatch(                                                               \
      gr_autocast_policy, #op, gr_autocast_device,                                                         \
      [](const auto&... gr_autocast_args) { return op(gr_autocast_args...); }, __VA_ARGS__)
