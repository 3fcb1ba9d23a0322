// masked_fill (a number or a 0-d tensor), masked_select and masked_scatter, with backward.
// masked_select and masked_scatter are each other's adjoint, so the backwards are
// differentiable again. Out of place, self and mask broadcast together (as torch).
#include "autograd/function.h"
#include "autograd/ops.h"
#include "core/factory.h"
#include "core/native/copy/copy.h"
#include "core/native/index/index_ops.h"
#include "core/native/shape/shape.h"
#include "core/native/elementwise/strided_loop.h"

namespace gr {

using autograd::record;
using autograd::sum_to;

namespace {

void check_value(const Tensor& value, const char* op) {
  GR_CHECK(value.dim() == 0, op, ": only supports a 0-dimensional value tensor, but got a tensor with ", value.dim(),
           " dimension(s) of shape ", value.sizes());
}

// The elements of source, in order, at the set positions of mask (both of `shape`).
Tensor scatter_by_mask(const Tensor& self, const Tensor& mask, const Tensor& source, const char* op) {
  GR_CHECK(source.scalar_type() == self.scalar_type(), op, ": expected self and source to have the same dtype, got ",
           self.scalar_type(), " and ", source.scalar_type());
  const bool in_place = self.is_contiguous();  // else through a contiguous copy
  Tensor out = in_place ? self : native::contiguous(self);
  const int64_t count = native::masked_scatter_stub(self.device(), out, native::contiguous(mask), native::contiguous(source));
  GR_CHECK(source.numel() >= count, op, ": expected source to have at least ", count, " elements (the set positions of ",
           "the mask of shape ", mask.sizes(), "), but it has ", source.numel());
  if (in_place) self.unsafe_impl()->storage.bump_version();
  else native::copy_(self, out);
  return self;
}

void record_masked_scatter(const Tensor& self, const Tensor& mask, const Tensor& source, const Tensor& out) {
  if (!autograd::needs_grad(self, source)) return;
  record("MaskedScatterBackward0", {self, source}, {out},
         [m = mask.detach(), self_shape = self.sizes().vec(), src_shape = source.sizes().vec()](
             const TensorList& g, const std::vector<bool>& needs) {
           Tensor gs;
           if (needs[1]) {
             Tensor picked = masked_select(g[0], m);
             int64_t numel = 1;
             for (int64_t s : src_shape) numel *= s;
             if (picked.numel() < numel)  // the source elements the mask did not reach get zeros
               picked = index_add(zeros({numel}, g[0].options()), 0, arange(picked.numel(), TensorOptions(kInt64).device(g[0].device())), picked);
             gs = picked.reshape(src_shape);
           }
           return TensorList{needs[0] ? sum_to(g[0].masked_fill(m, 0), self_shape) : Tensor(), gs};
         });
}

}  // namespace

namespace {
// masked_fill.Scalar is MaskedFillBackward0, masked_fill.Tensor MaskedFillBackward1.
Tensor masked_filled(const char* node, const Tensor& self, const Tensor& mask, const Scalar& value) {
  Tensor out = native::masked_fill(self, mask, value);
  if (autograd::needs_grad(self))
    record(node, {self}, {out},
           [m = mask.detach(), shape = self.sizes().vec()](const TensorList& g, const std::vector<bool>&) {
             return TensorList{sum_to(g[0].masked_fill(m, 0), shape)};
           });
  return out;
}
}  // namespace

Tensor masked_fill(const Tensor& self, const Tensor& mask, const Scalar& value) {
  return masked_filled("MaskedFillBackward0", self, mask, value);
}

// A value that needs a gradient (or lives on a device) goes through where (WhereBackward0, where
// PyTorch records MaskedFillBackward1); a plain one is a number.
Tensor masked_fill(const Tensor& self, const Tensor& mask, const Tensor& value) {
  check_value(value, "masked_fill");
  if (autograd::needs_grad(value) || !value.is_cpu()) return where(mask, value.to(self.scalar_type()), self);
  return masked_filled("MaskedFillBackward1", self, mask, value.item());
}

Tensor& Tensor::masked_fill_(const Tensor& mask, const Scalar& value) const {
  autograd::check_inplace(*this, "masked_fill_");
  native::masked_fill_(*this, mask, value);
  if (autograd::needs_grad(*this))
    record("MaskedFillBackward0", {*this}, {*this}, [m = mask.detach()](const TensorList& g, const std::vector<bool>&) {
      return TensorList{g[0].masked_fill(m, 0)};
    });
  return const_cast<Tensor&>(*this);
}

Tensor& Tensor::masked_fill_(const Tensor& mask, const Tensor& value) const {
  check_value(value, "masked_fill_");
  autograd::check_inplace(*this, "masked_fill_");
  native::masked_fill_(*this, mask, value.item());
  if (autograd::needs_grad(*this, value))
    record("MaskedFillBackward1", {*this, value}, {*this},
           [m = mask.detach()](const TensorList& g, const std::vector<bool>& needs) {
             return TensorList{needs[0] ? g[0].masked_fill(m, 0) : Tensor(), needs[1] ? gr::where(m, g[0], 0).sum() : Tensor()};
           });
  return const_cast<Tensor&>(*this);
}


Tensor masked_select(const Tensor& self, const Tensor& mask) {
  GR_CHECK(mask.scalar_type() == kBool, "masked_select: expected a bool mask, got ", mask.scalar_type());
  std::vector<int64_t> shape = native::broadcast_shapes(self.sizes(), mask.sizes(), "masked_select");
  Tensor m = native::expand(mask, shape);
  Tensor out = native::masked_select(self, mask);
  if (autograd::needs_grad(self))
    record("MaskedSelectBackward0", {self}, {out},
           [m = m, shape, self_shape = self.sizes().vec()](const TensorList& g, const std::vector<bool>&) {
             return TensorList{sum_to(masked_scatter(zeros(shape, g[0].options()), m, g[0]), self_shape)};
           });
  return out;
}

Tensor masked_scatter(const Tensor& self, const Tensor& mask, const Tensor& source) {
  GR_CHECK(mask.scalar_type() == kBool, "masked_scatter: expected a bool mask, got ", mask.scalar_type());
  std::vector<int64_t> shape = native::broadcast_shapes(self.sizes(), mask.sizes(), "masked_scatter");
  Tensor m = native::expand(mask, shape);
  Tensor out = scatter_by_mask(native::clone(native::expand(self, shape)), m, source, "masked_scatter");
  record_masked_scatter(self, m, source, out);
  return out;
}

Tensor& Tensor::masked_scatter_(const Tensor& mask, const Tensor& source) const {
  GR_CHECK(mask.scalar_type() == kBool, "masked_scatter_: expected a bool mask, got ", mask.scalar_type());
  std::vector<int64_t> shape = native::broadcast_shapes(sizes(), mask.sizes(), "masked_scatter_");
  GR_CHECK(IntArrayRef(shape) == sizes(), "masked_scatter_: mask of shape ", mask.sizes(),
           " cannot be broadcast to self's shape ", sizes());
  autograd::check_inplace(*this, "masked_scatter_");
  Tensor m = native::expand(mask, shape);
  scatter_by_mask(*this, m, source, "masked_scatter_");
  record_masked_scatter(*this, m, source, *this);
  return const_cast<Tensor&>(*this);
}

}  // namespace gr
