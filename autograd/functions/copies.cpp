// contiguous, clone, to(dtype), to(device), copy_, fill_ and zero_ with autograd.
#include "autograd/function.h"
#include "autograd/ops.h"
#include "core/native/copy.h"
#include "core/native/reduce.h"

namespace gr {

using autograd::record;

namespace {
// The gradient of a copy is the output gradient, converted back to the input's dtype/device.
Tensor copy_like(const char* name, const Tensor& self, Tensor out) {
  if (autograd::needs_grad(self))
    record(name, {self}, {out}, [dtype = self.scalar_type(), device = self.device()](const TensorList& g,
                                                                                     const std::vector<bool>&) {
      return TensorList{g[0].to(dtype).to(device)};
    });
  return out;
}
}  // namespace

Tensor Tensor::contiguous() const { return is_contiguous() ? *this : copy_like("CloneBackward", *this, native::clone(*this)); }
Tensor Tensor::clone() const { return copy_like("CloneBackward", *this, native::clone(*this)); }

Tensor Tensor::to(ScalarType dtype) const {
  if (dtype == scalar_type()) return *this;
  GR_CHECK(!requires_grad() || gr::is_floating_point(dtype) || !GradMode::is_enabled(), "to(", dtype,
           "): a tensor that requires grad can only be converted to a floating point dtype (or detach() it first)");
  Tensor out = native::to_dtype(*this, dtype);
  return gr::is_floating_point(dtype) ? copy_like("ToCopyBackward", *this, out) : out;
}

Tensor Tensor::to(Device device) const {
  if (device == this->device()) return *this;
  return copy_like("ToCopyBackward", *this, native::to_device(*this, device));
}

Tensor& Tensor::copy_(const Tensor& src) {
  autograd::check_inplace(*this, "copy_");
  native::copy_(*this, src);
  if (autograd::needs_grad(src)) {
    record("CopyBackward", {src}, {*this},
           [shape = src.sizes().vec(), dtype = src.scalar_type(), device = src.device()](const TensorList& g,
                                                                                         const std::vector<bool>&) {
             return TensorList{autograd::sum_to(g[0].to(dtype).to(device), shape)};
           });
  } else if (requires_grad() && !is_leaf() && GradMode::is_enabled()) {
    // Overwritten by a constant: no gradient flows to the old history any more.
    record("CopyBackward", {}, {*this}, [](const TensorList&, const std::vector<bool>&) { return TensorList{}; });
  }
  return *this;
}

Tensor& Tensor::fill_(const Scalar& value) {
  autograd::check_inplace(*this, "fill_");
  native::fill_(*this, value);
  if (requires_grad() && !is_leaf() && GradMode::is_enabled())
    record("FillBackward", {}, {*this}, [](const TensorList&, const std::vector<bool>&) { return TensorList{}; });
  return *this;
}

Tensor& Tensor::zero_() { return fill_(0); }

}  // namespace gr
