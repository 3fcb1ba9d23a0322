// tril and triu (and in place): keep the elements on and below (above) diagonal k of the last
// two dims, zero the rest. Each is its own adjoint, so the backward is the same op.
#include "autograd/function.h"
#include "autograd/ops.h"
#include "core/native/elementwise/elementwise.h"
#include "core/native/index/index_ops.h"
#include "core/native/shape/rearrange.h"

namespace gr {

using autograd::record;

namespace {

Tensor keep_mask(const Tensor& self, int64_t k, bool lower, const char* op) {
  GR_CHECK(self.dim() >= 2, op, ": input tensor must have at least 2 dimensions, got shape ", self.sizes());
  return native::triangle_mask(self.size(-2), self.size(-1), k, lower, self.device());
}

Tensor triangle(const Tensor& self, int64_t k, bool lower) {
  const char* op = lower ? "tril" : "triu";
  Tensor out = native::where(keep_mask(self, k, lower, op), self, native::wrapped_scalar(self, 0));
  if (autograd::needs_grad(self))
    record(lower ? "TrilBackward0" : "TriuBackward0", {self}, {out}, [k, lower](const TensorList& g, const std::vector<bool>&) {
      return TensorList{lower ? tril(g[0], k) : triu(g[0], k)};
    });
  return out;
}

Tensor& triangle_(const Tensor& self, int64_t k, bool lower) {
  const char* op = lower ? "tril_" : "triu_";
  autograd::check_inplace(self, op);
  // What tril(k) drops is what triu(k + 1) keeps, and the other way round.
  native::masked_fill_(self, keep_mask(self, lower ? k + 1 : k - 1, !lower, op), 0);
  if (autograd::needs_grad(self))
    record(lower ? "TrilBackward0" : "TriuBackward0", {self}, {self}, [k, lower](const TensorList& g, const std::vector<bool>&) {
      return TensorList{lower ? tril(g[0], k) : triu(g[0], k)};
    });
  return const_cast<Tensor&>(self);
}

}  // namespace

Tensor tril(const Tensor& self, int64_t diagonal) { return triangle(self, diagonal, true); }
Tensor triu(const Tensor& self, int64_t diagonal) { return triangle(self, diagonal, false); }
Tensor& Tensor::tril_(int64_t diagonal) const { return triangle_(*this, diagonal, true); }
Tensor& Tensor::triu_(int64_t diagonal) const { return triangle_(*this, diagonal, false); }

}  // namespace gr
