// Comparisons with numbers, logical, bitwise and classification ops, isclose, allclose and
// equal: not differentiable (bool or integer results), so no history is recorded.
#include "autograd/ops.h"
#include "core/native/elementwise.h"
#include "core/native/elementwise_math.h"
#include "core/native/reduce.h"

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

#define GR_DEFINE_LOGICAL(name)                                                                       \
  Tensor name(const Tensor& self, const Tensor& other) { return native::name(self, other); }         \
  Tensor Tensor::name(const Tensor& other) const { return native::name(*this, other); }
GR_DEFINE_LOGICAL(logical_and)
GR_DEFINE_LOGICAL(logical_or)
GR_DEFINE_LOGICAL(logical_xor)
#undef GR_DEFINE_LOGICAL

// Bitwise ops write integers: in place they bump the version like any in-place op, and a
// tensor that requires grad is never an integer one, so there is no history to check.
#define GR_DEFINE_BITWISE(name)                                                                              \
  Tensor name(const Tensor& self, const Tensor& other) { return native::name(self, other); }                \
  Tensor name(const Tensor& self, const Scalar& other) {                                                     \
    return native::name(self, native::wrapped_scalar(self, other));                                          \
  }                                                                                                          \
  Tensor Tensor::name(const Tensor& other) const { return gr::name(*this, other); }                          \
  Tensor Tensor::name(const Scalar& other) const { return gr::name(*this, other); }                          \
  Tensor& Tensor::name##_(const Tensor& other) const {                                                       \
    native::name##_(*this, other);                                                                           \
    return const_cast<Tensor&>(*this);                                                                       \
  }                                                                                                          \
  Tensor& Tensor::name##_(const Scalar& other) const { return name##_(native::wrapped_scalar(*this, other)); }
GR_DEFINE_BITWISE(bitwise_and)
GR_DEFINE_BITWISE(bitwise_or)
GR_DEFINE_BITWISE(bitwise_xor)
#undef GR_DEFINE_BITWISE

#define GR_DEFINE_PREDICATE(name)                                       \
  Tensor name(const Tensor& self) { return native::name(self); }       \
  Tensor Tensor::name() const { return native::name(*this); }
GR_DEFINE_PREDICATE(logical_not)
GR_DEFINE_PREDICATE(bitwise_not)
GR_DEFINE_PREDICATE(isnan)
GR_DEFINE_PREDICATE(isinf)
GR_DEFINE_PREDICATE(isfinite)
#undef GR_DEFINE_PREDICATE

Tensor& Tensor::bitwise_not_() const {
  native::bitwise_not_(*this);
  return const_cast<Tensor&>(*this);
}

Tensor isclose(const Tensor& self, const Tensor& other, double rtol, double atol, bool equal_nan) {
  return native::isclose(self, other, rtol, atol, equal_nan);
}
Tensor Tensor::isclose(const Tensor& other, double rtol, double atol, bool equal_nan) const {
  return native::isclose(*this, other, rtol, atol, equal_nan);
}

bool allclose(const Tensor& self, const Tensor& other, double rtol, double atol, bool equal_nan) {
  Tensor close = native::isclose(self, other, rtol, atol, equal_nan);
  return native::sum(native::logical_not(close)).item<int64_t>() == 0;
}

bool equal(const Tensor& self, const Tensor& other) { return self.equal(other); }

}  // namespace gr
