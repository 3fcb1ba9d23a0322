// cumsum and cumprod with backward (written with differentiable ops, so twice differentiable).
// cumprod's gradient stays exact when the input holds zeros: see Note [cumprod with zeros].
#include "autograd/function.h"
#include "autograd/functions/reduce_grad.h"
#include "autograd/ops.h"
#include "core/factory.h"
#include "core/native/copy.h"
#include "core/native/elementwise.h"
#include "core/native/reduce.h"
#include "core/native/scan.h"

namespace gr {

using autograd::record;
using autograd::SavedTensor;

namespace {

// Note [cumprod with zeros]
// d out_j / d x_k = prod_{i <= j, i != k} x_i for j >= k. Before the first zero z of a run
// the usual sum_{j >= k} g_j out_j / x_k is exact (x_k != 0 and out_j = 0 from z on). After z
// every such product holds x_z = 0, so the gradient is 0. At z itself it is
// sum_{j >= z} g_j * cumprod(x with x_z replaced by 1)_j. (Directions flip for a reverse scan.)
Tensor cumprod_backward(const Tensor& g, const Tensor& x, const Tensor& out, int64_t d, bool reverse) {
  using autograd::scan;
  Tensor zero = native::eq(x, native::wrapped_scalar(x, 0));
  if (native::count_nonzero(zero).item<int64_t>() == 0) return scan(g * out, d, false, !reverse) / x;
  Tensor zeros_so_far = native::cumsum(zero, d, std::nullopt, reverse);  // int64
  Tensor before = native::eq(zeros_so_far, native::wrapped_scalar(zeros_so_far, 0));
  Tensor first = native::eq(native::where(zero, zeros_so_far, native::wrapped_scalar(zeros_so_far, 0)),
                            native::wrapped_scalar(zeros_so_far, 1));
  Tensor simple = scan(g * out, d, false, !reverse) / where(before, x, 1.0);
  Tensor skip_zero = scan(where(first, ones_like(x), x), d, true, reverse);
  Tensor at_zero = scan(where(before, zeros_like(g), g * skip_zero), d, false, !reverse);
  return where(before, simple, where(first, at_zero, zeros_like(g)));
}

}  // namespace

namespace autograd {

Tensor scan(const Tensor& x, int64_t dim, bool product, bool reverse) {
  const int64_t d = wrap_dim(dim, x.dim(), product ? "cumprod" : "cumsum");
  Tensor out = product ? native::cumprod(x, d, std::nullopt, reverse) : native::cumsum(x, d, std::nullopt, reverse);
  if (autograd::needs_grad(x) && out.is_floating_point()) {
    SavedTensor sx(product ? x : Tensor()), so(product ? out : Tensor(), /*is_output=*/true);
    record(product ? "CumprodBackward0" : "CumsumBackward0", {x}, {out},
           [sx, so, d, product, reverse](const TensorList& g, const std::vector<bool>&) {
             if (g[0].dim() == 0) return TensorList{g[0]};
             return TensorList{product ? cumprod_backward(g[0], sx.unpack(), so.unpack(), d, reverse)
                                       : scan(g[0], d, false, !reverse)};
           });
  }
  return out;
}

}  // namespace autograd

namespace {
// A dtype= argument converts first (differentiably, for floating targets).
Tensor converted(const Tensor& x, std::optional<ScalarType> dtype) {
  return dtype && *dtype != x.scalar_type() ? x.to(*dtype) : x;
}
}  // namespace

Tensor cumsum(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype) {
  return autograd::scan(converted(x, dtype), dim, false, false);
}
Tensor cumprod(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype) {
  return autograd::scan(converted(x, dtype), dim, true, false);
}

Tensor Tensor::cumsum(int64_t dim, std::optional<ScalarType> dtype) const { return gr::cumsum(*this, dim, dtype); }
Tensor Tensor::cumprod(int64_t dim, std::optional<ScalarType> dtype) const { return gr::cumprod(*this, dim, dtype); }

}  // namespace gr
