// max/min (of all elements and along a dim), amax/amin, median/nanmedian with backward, and
// argmax/argmin. A value chosen by index gets the whole gradient; a value shared by ties
// (max(), amax, median()) splits it evenly among them, as torch.
#include "autograd/function.h"
#include "autograd/functions/reduce_grad.h"
#include "autograd/ops.h"
#include "core/factory.h"
#include "core/native/copy.h"
#include "core/native/elementwise.h"
#include "core/native/median.h"
#include "core/native/reduce.h"
#include "core/native/shape.h"

namespace gr {

using autograd::record;
using autograd::ReducedDims;
using autograd::SavedTensor;

namespace {

// 1 where x equals its reduction's result (kept dims), else 0, in x's dtype: a constant.
// With nan_too, NaN inputs match a NaN result (the reductions that return the NaN itself).
Tensor ties(const Tensor& x, const Tensor& result_kept, bool nan_too) {
  const ScalarType t = x.scalar_type();
  Tensor hit = native::to_dtype(native::eq(x, result_kept), t);
  if (nan_too)
    hit = native::add(hit, native::mul(native::to_dtype(native::ne(x, x), t),
                                       native::to_dtype(native::ne(result_kept, result_kept), t)));
  return hit;
}

// The gradient of a reduction whose result is shared evenly by the elements tied with it.
Tensor tied_reduction(const char* name, const Tensor& x, const Tensor& out, IntArrayRef dims, bool keepdim,
                      bool nan_too) {
  if (autograd::needs_grad(x)) {
    SavedTensor sx(x), so(out, /*is_output=*/true);  // Note [Saved outputs]
    record(name, {x}, {out},
           [sx, so, r = ReducedDims(x.sizes(), dims, keepdim, name), dims = dims.vec(), nan_too](
               const TensorList& g, const std::vector<bool>&) {
             Tensor hit = ties(sx.unpack(), r.kept(so.unpack()), nan_too);
             Tensor count = native::sum(hit, dims, true);
             return TensorList{hit * (r.kept(g[0]) / count)};
           });
  }
  return out;
}

// The gradient of a reduction along dim that picked the element at `indices`.
void record_selected(const char* name, const Tensor& x, const Tensor& values, const Tensor& indices, int64_t dim,
                     bool keepdim) {
  if (!autograd::needs_grad(x)) return;
  const int64_t d = wrap_dim(dim, x.dim(), name);
  record(name, {x}, {values},
         [idx = indices, r = ReducedDims(x.sizes(), x.dim() ? IntArrayRef(d) : IntArrayRef(), keepdim, name), d](
             const TensorList& g, const std::vector<bool>&) {
           if (r.sizes.empty()) return TensorList{g[0]};
           // hit[..., k, ...] = (k == index): positions along dim compared with the index.
           std::vector<int64_t> shape(r.sizes.size(), 1);
           shape[d] = r.sizes[d];
           Tensor pos = native::reshape(arange(r.sizes[d], TensorOptions(kInt64).device(g[0].device())), shape);
           Tensor hit = native::to_dtype(native::eq(pos, r.kept(idx)), g[0].scalar_type());
           return TensorList{hit * r.kept(g[0])};
         });
}

std::tuple<Tensor, Tensor> selected(const char* name, const Tensor& x, int64_t dim, bool keepdim,
                                    std::pair<Tensor, Tensor> (*forward)(const Tensor&, int64_t, bool)) {
  auto [values, indices] = forward(x, dim, keepdim);
  record_selected(name, x, values, indices, dim, keepdim);
  return {values, indices};
}

}  // namespace

Tensor max(const Tensor& x) { return tied_reduction("MaxBackward1", x, native::max(x), {}, false, true); }
Tensor min(const Tensor& x) { return tied_reduction("MinBackward1", x, native::min(x), {}, false, true); }
Tensor amax(const Tensor& x, IntArrayRef dim, bool keepdim) {
  return tied_reduction("AmaxBackward0", x, native::amax(x, dim, keepdim), dim, keepdim, false);
}
Tensor amin(const Tensor& x, IntArrayRef dim, bool keepdim) {
  return tied_reduction("AminBackward0", x, native::amin(x, dim, keepdim), dim, keepdim, false);
}
Tensor median(const Tensor& x) { return tied_reduction("MedianBackward0", x, native::median(x, false), {}, false, true); }
Tensor nanmedian(const Tensor& x) {
  return tied_reduction("NanmedianBackward0", x, native::median(x, true), {}, false, true);
}

std::tuple<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim) {
  return selected("MaxBackward0", x, dim, keepdim, [](const Tensor& t, int64_t d, bool k) { return native::max(t, d, k); });
}
std::tuple<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim) {
  return selected("MinBackward0", x, dim, keepdim, [](const Tensor& t, int64_t d, bool k) { return native::min(t, d, k); });
}
std::tuple<Tensor, Tensor> median(const Tensor& x, int64_t dim, bool keepdim) {
  return selected("MedianBackward1", x, dim, keepdim,
                  [](const Tensor& t, int64_t d, bool k) { return native::median(t, d, k, false); });
}
std::tuple<Tensor, Tensor> nanmedian(const Tensor& x, int64_t dim, bool keepdim) {
  return selected("NanmedianBackward1", x, dim, keepdim,
                  [](const Tensor& t, int64_t d, bool k) { return native::median(t, d, k, true); });
}

Tensor argmax(const Tensor& x, std::optional<int64_t> dim, bool keepdim) { return native::argmax(x, dim, keepdim); }
Tensor argmin(const Tensor& x, std::optional<int64_t> dim, bool keepdim) { return native::argmin(x, dim, keepdim); }

Tensor Tensor::max() const { return gr::max(*this); }
std::tuple<Tensor, Tensor> Tensor::max(int64_t dim, bool keepdim) const { return gr::max(*this, dim, keepdim); }
Tensor Tensor::min() const { return gr::min(*this); }
std::tuple<Tensor, Tensor> Tensor::min(int64_t dim, bool keepdim) const { return gr::min(*this, dim, keepdim); }
Tensor Tensor::amax(IntArrayRef dim, bool keepdim) const { return gr::amax(*this, dim, keepdim); }
Tensor Tensor::amin(IntArrayRef dim, bool keepdim) const { return gr::amin(*this, dim, keepdim); }
Tensor Tensor::argmin(std::optional<int64_t> dim, bool keepdim) const { return gr::argmin(*this, dim, keepdim); }
Tensor Tensor::median() const { return gr::median(*this); }
std::tuple<Tensor, Tensor> Tensor::median(int64_t dim, bool keepdim) const { return gr::median(*this, dim, keepdim); }
Tensor Tensor::nanmedian() const { return gr::nanmedian(*this); }
std::tuple<Tensor, Tensor> Tensor::nanmedian(int64_t dim, bool keepdim) const {
  return gr::nanmedian(*this, dim, keepdim);
}

}  // namespace gr
