// The *_like factories with options, logspace, and Tensor::new_empty/new_zeros/new_ones/new_full.
#include "core/factory_like.h"

#include "core/factory.h"
#include "core/native/copy/copy.h"
#include "core/native/copy/range.h"

namespace gr {

namespace {
// t's dtype and device unless options name others (libtorch's merge of a tensor's options).
TensorOptions like(const Tensor& t, const TensorOptions& options, const char* op) {
  GR_CHECK(t.defined(), op, ": the model tensor is undefined");
  return options.merged_over(t.options());
}
}  // namespace

// (like() is called before t.sizes(): it checks that t is defined.)
Tensor ones_like(const Tensor& t, TensorOptions options) {
  const TensorOptions o = like(t, options, "ones_like");
  return ones(t.sizes(), o);
}
Tensor full_like(const Tensor& t, const Scalar& value, TensorOptions options) {
  const TensorOptions o = like(t, options, "full_like");
  return full(t.sizes(), value, o);
}
Tensor rand_like(const Tensor& t, TensorOptions options, Generator* gen) {
  const TensorOptions o = like(t, options, "rand_like");
  return rand(t.sizes(), o, gen);
}
Tensor randn_like(const Tensor& t, TensorOptions options, Generator* gen) {
  const TensorOptions o = like(t, options, "randn_like");
  return randn(t.sizes(), o, gen);
}
Tensor randint_like(const Tensor& t, int64_t high, TensorOptions options, Generator* gen) {
  const TensorOptions o = like(t, options, "randint_like");
  return randint(0, high, t.sizes(), o, gen);
}
Tensor randint_like(const Tensor& t, int64_t low, int64_t high, TensorOptions options, Generator* gen) {
  const TensorOptions o = like(t, options, "randint_like");
  return randint(low, high, t.sizes(), o, gen);
}

Tensor logspace(const Scalar& start, const Scalar& end, int64_t steps, double base, TensorOptions options) {
  Tensor out = native::to_device(native::logspace_cpu(start, end, steps, base, options.dtype()), options.device());
  if (options.requires_grad()) out.set_requires_grad(true);
  return out;
}

Tensor Tensor::new_empty(IntArrayRef size, TensorOptions options) const {
  return empty(size, like(*this, options, "new_empty"));
}
Tensor Tensor::new_zeros(IntArrayRef size, TensorOptions options) const {
  return zeros(size, like(*this, options, "new_zeros"));
}
Tensor Tensor::new_ones(IntArrayRef size, TensorOptions options) const {
  return ones(size, like(*this, options, "new_ones"));
}
Tensor Tensor::new_full(IntArrayRef size, const Scalar& fill_value, TensorOptions options) const {
  return full(size, fill_value, like(*this, options, "new_full"));
}

}  // namespace gr
