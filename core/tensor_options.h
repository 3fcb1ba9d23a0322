// TensorOptions: dtype, device and requires_grad for tensor creation, as in libtorch. Each
// remembers whether it was set (has_dtype(), ...), so that to(options) and new_zeros(size,
// options) keep the tensor's own dtype or device where the options name none.
#pragma once

#include <string>
#include <type_traits>
#include <utility>

#include "core/device.h"
#include "core/dtype.h"

namespace gr {

struct TensorOptions {
  TensorOptions() = default;
  TensorOptions(ScalarType t) : dtype_(t), has_dtype_(true) {}
  TensorOptions(Device d) : device_(d), has_device_(true) {}
  TensorOptions(DeviceType d) : TensorOptions(Device(d)) {}
  // A device string ("cuda:1"). A template, so that a literal 0 (which would convert to a
  // null const char*) never turns into options.
  template <class S>
    requires std::is_convertible_v<S&&, std::string>
  TensorOptions(S&& device) : TensorOptions(Device(std::string(std::forward<S>(device)))) {}

  TensorOptions dtype(ScalarType t) const {
    TensorOptions o = *this;
    o.dtype_ = t;
    o.has_dtype_ = true;
    return o;
  }
  TensorOptions device(Device d) const {
    TensorOptions o = *this;
    o.device_ = d;
    o.has_device_ = true;
    return o;
  }
  TensorOptions requires_grad(bool r) const {
    TensorOptions o = *this;
    o.requires_grad_ = r;
    o.has_requires_grad_ = true;
    return o;
  }
  // Unset fields read as the defaults: float32, the CPU, false.
  ScalarType dtype() const { return dtype_; }
  Device device() const { return device_; }
  bool requires_grad() const { return requires_grad_; }
  bool has_dtype() const { return has_dtype_; }
  bool has_device() const { return has_device_; }
  bool has_requires_grad() const { return has_requires_grad_; }
  // These options with the fields they leave unset taken from `defaults` (as libtorch's
  // TensorOptions::merge_in, with the roles named the other way round).
  TensorOptions merged_over(const TensorOptions& defaults) const {
    TensorOptions o = defaults;
    if (has_dtype_) o = o.dtype(dtype_);
    if (has_device_) o = o.device(device_);
    if (has_requires_grad_) o = o.requires_grad(requires_grad_);
    return o;
  }

 private:
  ScalarType dtype_ = kFloat32;
  Device device_;
  bool requires_grad_ = false;
  bool has_dtype_ = false, has_device_ = false, has_requires_grad_ = false;
};

// Shorthands: gr::dtype(gr::kFloat64).requires_grad(true).
inline TensorOptions dtype(ScalarType t) { return TensorOptions(t); }
inline TensorOptions device(Device d) { return TensorOptions(d); }
inline TensorOptions requires_grad(bool r = true) { return TensorOptions().requires_grad(r); }

}  // namespace gr
