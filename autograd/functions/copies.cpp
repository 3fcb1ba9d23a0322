// contiguous, clone, to(device, dtype), copy_, fill_ and zero_ with autograd.
#include "autograd/function.h"
#include "autograd/ops.h"
#include "core/factory.h"
#include "core/native/copy/copy.h"
#include "core/native/reduce/reduce.h"

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

Tensor Tensor::contiguous() const { return is_contiguous() ? *this : copy_like("CloneBackward0", *this, native::clone(*this)); }
Tensor Tensor::clone() const { return copy_like("CloneBackward0", *this, native::clone(*this)); }

Tensor Tensor::to(Device device, ScalarType dtype, bool non_blocking, bool copy) const {
  GR_CHECK(defined(), "to: tensor is undefined");
  if (dtype == scalar_type() && device == this->device()) return copy ? clone() : *this;
  GR_CHECK(!requires_grad() || gr::is_floating_point(dtype) || !GradMode::is_enabled(), "to(", dtype,
           "): a tensor that requires grad can only be converted to a floating point dtype (or detach() it first)");
  // One copy_: across devices it moves the bytes and converts on the destination.
  Tensor out = empty(sizes(), TensorOptions(dtype).device(device));
  native::copy_(out, *this, non_blocking);
  return gr::is_floating_point(dtype) ? copy_like("ToCopyBackward0", *this, out) : out;
}
Tensor Tensor::to(ScalarType dtype, bool non_blocking, bool copy) const {
  return to(device(), dtype, non_blocking, copy);
}
Tensor Tensor::to(TensorOptions options, bool non_blocking, bool copy) const {
  GR_CHECK(!options.has_requires_grad(), "to(options): options with requires_grad are not supported (as in libtorch); "
                                         "use requires_grad_() on the result");
  return to(options.has_device() ? options.device() : device(), options.has_dtype() ? options.dtype() : scalar_type(),
            non_blocking, copy);
}
Tensor Tensor::to(const Tensor& other, bool non_blocking, bool copy) const {
  return to(other.device(), other.scalar_type(), non_blocking, copy);
}

Tensor& Tensor::copy_(const Tensor& src, bool non_blocking) const {
  autograd::check_inplace(*this, "copy_");
  native::copy_(*this, src, non_blocking);
  if (autograd::needs_grad(src)) {
    record("CopyBackwards", {src}, {*this},
           [shape = src.sizes().vec(), dtype = src.scalar_type(), device = src.device()](const TensorList& g,
                                                                                         const std::vector<bool>&) {
             return TensorList{autograd::sum_to(g[0].to(dtype).to(device), shape)};
           });
  } else if (requires_grad() && !is_leaf() && GradMode::is_enabled()) {
    // Overwritten by a constant: no gradient flows to the old history any more.
    record("CopyBackwards", {}, {*this}, [](const TensorList&, const std::vector<bool>&) { return TensorList{}; });
  }
  return const_cast<Tensor&>(*this);
}

namespace {
// fill_.Scalar is FillBackward2 (after fill.Scalar and fill.Tensor), zero_ ZeroBackward0.
Tensor& filled(const char* node, const char* op, const Tensor& self, const Scalar& value) {
  autograd::check_inplace(self, op);
  value.check_fits(self.scalar_type(), op);
  native::fill_(self, value);
  if (self.requires_grad() && !self.is_leaf() && GradMode::is_enabled())
    record(node, {}, {self}, [](const TensorList&, const std::vector<bool>&) { return TensorList{}; });
  return const_cast<Tensor&>(self);
}
}  // namespace

Tensor& Tensor::fill_(const Scalar& value) const { return filled("FillBackward2", "fill_", *this, value); }
Tensor& Tensor::zero_() const { return filled("ZeroBackward0", "zero_", *this, 0); }

}  // namespace gr
