// Comparisons with numbers, logical, bitwise and classification ops, isclose, allclose and
// equal: not differentiable (bool or integer results), so no history is recorded.
#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "core/native/copy/copy.h"
#include "core/native/elementwise/elementwise.h"
#include "core/native/elementwise/elementwise_math.h"
#include "core/native/reduce/reduce.h"

namespace gr {

#define GR_DEFINE_SCALAR_COMPARISON(name) \
  Tensor name(const Tensor& self, const Scalar& other) { return native::name(self, native::wrapped_scalar(self, other)); }
GR_DEFINE_SCALAR_COMPARISON(eq)
GR_DEFINE_SCALAR_COMPARISON(ne)
GR_DEFINE_SCALAR_COMPARISON(gt)
GR_DEFINE_SCALAR_COMPARISON(lt)
GR_DEFINE_SCALAR_COMPARISON(ge)
GR_DEFINE_SCALAR_COMPARISON(le)
#undef GR_DEFINE_SCALAR_COMPARISON

namespace {
// In place, a logical op writes 0 or 1 in self's dtype; it has no gradient to record.
Tensor& write_logical(const char* op, const Tensor& self, const Tensor& result) {
  GR_CHECK(!GradMode::is_enabled() || !self.requires_grad(), op,
           ": the result is not differentiable, so it can't be written in place into a tensor that requires grad");
  GR_CHECK(result.sizes() == self.sizes(), op, ": output with shape ", self.sizes(),
           " doesn't match the broadcast shape ", result.sizes());
  native::copy_(self, result);
  return const_cast<Tensor&>(self);
}
}  // namespace

// The logical, bitwise and classification lines of core/native/math_ops.def.
#define GR_LOGICAL_OP(name, F)                                                                                  \
  Tensor name(const Tensor& self, const Tensor& other) { return native::name(self, other); }                  \
  Tensor& Tensor::name##_(const Tensor& other) const { return write_logical(#name "_", *this, native::name(*this, other)); }
// Bitwise ops write integers: in place they bump the version like any in-place op, and a
// tensor that requires grad is never an integer one, so there is no history to check.
#define GR_BITWISE_OP(name, F)                                                                                  \
  Tensor name(const Tensor& self, const Tensor& other) { return native::name(self, other); }                  \
  Tensor name(const Tensor& self, const Scalar& other) { return native::name(self, native::wrapped_scalar(self, other)); } \
  Tensor name(const Scalar& self, const Tensor& other) { return native::name(native::wrapped_scalar(other, self), other); } \
  Tensor& Tensor::name##_(const Tensor& other) const {                                                         \
    native::name##_(*this, other);                                                                             \
    return const_cast<Tensor&>(*this);                                                                         \
  }                                                                                                            \
  Tensor& Tensor::name##_(const Scalar& other) const { return name##_(native::wrapped_scalar(*this, other)); }
#define GR_PREDICATE_OP(name, F) \
  Tensor name(const Tensor& self) { return native::name(self); }
#include "core/native/elementwise/math_ops.def"

Tensor logical_not(const Tensor& self) { return native::logical_not(self); }
Tensor& Tensor::logical_not_() const { return write_logical("logical_not_", *this, native::logical_not(*this)); }

Tensor bitwise_not(const Tensor& self) { return native::bitwise_not(self); }
Tensor& Tensor::bitwise_not_() const {
  native::bitwise_not_(*this);
  return const_cast<Tensor&>(*this);
}

Tensor isclose(const Tensor& self, const Tensor& other, double rtol, double atol, bool equal_nan) {
  return native::isclose(self, other, rtol, atol, equal_nan);
}

bool allclose(const Tensor& self, const Tensor& other, double rtol, double atol, bool equal_nan) {
  Tensor close = native::isclose(self, other, rtol, atol, equal_nan);
  return native::sum(native::logical_not(close)).item<int64_t>() == 0;
}

bool equal(const Tensor& self, const Tensor& other) { return self.equal(other); }

}  // namespace gr
