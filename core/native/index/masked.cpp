// masked_fill, masked_select and nonzero: argument checks, broadcasting and dispatch (kernels in
// index_cpu.cpp and masked_cpu.cpp).
#include "core/factory.h"
#include "core/native/copy/copy.h"
#include "core/native/index/index_ops.h"
#include "core/native/shape/shape.h"

namespace gr::native {

GR_DEFINE_DISPATCH(MaskedFillFn, masked_fill_stub);
GR_DEFINE_DISPATCH(NonzeroFn, nonzero_stub);
GR_DEFINE_DISPATCH(MaskedSelectFn, masked_select_stub);
GR_DEFINE_DISPATCH(MaskedScatterFn, masked_scatter_stub);

namespace {
void check_mask(const Tensor& self, const Tensor& mask, const char* op) {
  GR_CHECK(self.defined() && mask.defined(), op, ": undefined tensor argument");
  GR_CHECK(mask.scalar_type() == kBool, op, ": only supports boolean masks, but got mask with dtype ",
           mask.scalar_type());
  GR_CHECK(mask.device() == self.device(), op, ": expected self and mask on the same device, got ", self.device(),
           " and ", mask.device());
}
}  // namespace

Tensor masked_fill(const Tensor& self, const Tensor& mask, const Scalar& value) {
  check_mask(self, mask, "masked_fill");
  std::vector<int64_t> shape = broadcast_shapes(self.sizes(), mask.sizes(), "masked_fill");
  Tensor out = empty(shape, self.options());
  if (out.numel() == 0) return out;
  StridedLoop L = make_strided_loop({out, self, mask}, shape);
  masked_fill_stub(self.device(), L, self.scalar_type(), value);
  return out;
}

void masked_fill_(const Tensor& self, const Tensor& mask, const Scalar& value) {
  check_mask(self, mask, "masked_fill_");
  std::vector<int64_t> shape = broadcast_shapes(self.sizes(), mask.sizes(), "masked_fill_");
  GR_CHECK(IntArrayRef(shape) == self.sizes(), "masked_fill_: mask of shape ", mask.sizes(),
           " cannot be broadcast to self's shape ", self.sizes());
  if (self.numel() == 0) return;
  self.unsafe_impl()->storage.bump_version();
  StridedLoop L = make_strided_loop({self, self, mask}, shape);
  masked_fill_stub(self.device(), L, self.scalar_type(), value);
}

Tensor masked_select(const Tensor& self, const Tensor& mask) {
  check_mask(self, mask, "masked_select");
  std::vector<int64_t> shape = broadcast_shapes(self.sizes(), mask.sizes(), "masked_select");
  Tensor x = expand(self, shape), m = expand(mask, shape);
  return masked_select_stub(self.device(), contiguous(x), contiguous(m));
}

Tensor nonzero(const Tensor& self) {
  GR_CHECK(self.defined(), "nonzero: undefined tensor argument");
  return nonzero_stub(self.device(), self);
}

}  // namespace gr::native
