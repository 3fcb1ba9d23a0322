// sum, mean, var, max/min (full and along a dim) and argmax with backward.
#include "autograd/function.h"
#include "autograd/ops.h"
#include "core/factory.h"
#include "core/native/copy.h"
#include "core/native/elementwise.h"
#include "core/native/reduce.h"

namespace gr {

using autograd::record;
using autograd::SavedTensor;

namespace {

// Broadcasts the gradient of a reduction back over the input's shape (a stride-0 view;
// under create_graph the same through the differentiable reshape and expand).
Tensor expand_reduced(const Tensor& g, const std::vector<int64_t>& in_sizes, const std::vector<bool>& mask) {
  if (autograd::needs_grad(g)) return g.reshape(native::reduced_shape(in_sizes, mask, true)).expand(in_sizes);
  std::vector<int64_t> strides(in_sizes.size(), 0);
  // g has the kept dims (and, with keepdim, size-1 reduced dims) in order.
  const bool keepdim = static_cast<size_t>(g.dim()) == in_sizes.size();
  int64_t gd = 0;
  for (size_t d = 0; d < in_sizes.size(); ++d) {
    if (!mask[d]) strides[d] = g.stride(gd++);
    else if (keepdim) ++gd;
  }
  return make_view(g, in_sizes, strides, g.storage_offset());
}

int64_t reduced_count(IntArrayRef sizes, const std::vector<bool>& mask) {
  int64_t n = 1;
  for (size_t d = 0; d < sizes.size(); ++d)
    if (mask[d]) n *= sizes[d];
  return n;
}

}  // namespace

Tensor sum(const Tensor& x, IntArrayRef dims, bool keepdim) {
  Tensor out = native::sum(x, dims, keepdim);
  if (autograd::needs_grad(x)) {
    record("SumBackward", {x}, {out},
           [sizes = x.sizes().vec(), mask = native::reduction_mask(dims, x.dim(), "sum")](const TensorList& g,
                                                                                          const std::vector<bool>&) {
             return TensorList{expand_reduced(g[0], sizes, mask)};
           });
  }
  return out;
}
Tensor sum(const Tensor& x) { return sum(x, {}, false); }

Tensor mean(const Tensor& x, IntArrayRef dims, bool keepdim) {
  Tensor out = native::mean(x, dims, keepdim);
  if (autograd::needs_grad(x)) {
    std::vector<bool> mask = native::reduction_mask(dims, x.dim(), "mean");
    double count = static_cast<double>(reduced_count(x.sizes(), mask));
    record("MeanBackward", {x}, {out}, [sizes = x.sizes().vec(), mask, count](const TensorList& g, const std::vector<bool>&) {
      return TensorList{expand_reduced(g[0] / count, sizes, mask)};
    });
  }
  return out;
}
Tensor mean(const Tensor& x) { return mean(x, {}, false); }

Tensor var(const Tensor& x, IntArrayRef dims, bool unbiased, bool keepdim) {
  const int64_t correction = unbiased ? 1 : 0;
  Tensor out = native::var(x, dims, correction, keepdim);
  if (autograd::needs_grad(x)) {
    std::vector<bool> mask = native::reduction_mask(dims, x.dim(), "var");
    double denom = static_cast<double>(reduced_count(x.sizes(), mask) - correction);
    SavedTensor sx(x);
    record("VarBackward", {x}, {out},
           [sx, dims = dims.vec(), sizes = x.sizes().vec(), mask, denom](const TensorList& g, const std::vector<bool>&) {
             // d var / dx = 2 (x - mean) / (N - correction)
             Tensor xv = sx.unpack();
             Tensor centered = xv - gr::mean(xv, dims, true);
             return TensorList{centered * (expand_reduced(g[0], sizes, mask) / (denom / 2.0))};
           });
  }
  return out;
}
Tensor var(const Tensor& x) { return var(x, {}, true, false); }

namespace {

// max()/min() of all elements: the gradient is shared evenly by all elements equal to it.
Tensor full_extremum(const Tensor& x, bool is_max) {
  Tensor out = is_max ? native::max(x) : native::min(x);
  if (autograd::needs_grad(x)) {
    SavedTensor sx(x), so(out, /*is_output=*/true);
    record(is_max ? "MaxBackward" : "MinBackward", {x}, {out}, [sx, so](const TensorList& g, const std::vector<bool>&) {
      // The ties are piecewise constant: only g carries history.
      Tensor hit = native::to_dtype(native::eq(sx.unpack(), so.unpack()), g[0].scalar_type());
      return TensorList{hit * (g[0] / native::sum(hit))};
    });
  }
  return out;
}

// max/min along `dim`: the gradient goes to the element each index points at.
std::tuple<Tensor, Tensor> dim_extremum(const Tensor& x, int64_t dim, bool keepdim, bool is_max) {
  auto [values, indices] = is_max ? native::max(x, dim, keepdim) : native::min(x, dim, keepdim);
  if (autograd::needs_grad(x)) {
    int64_t d = wrap_dim(dim, x.dim(), is_max ? "max" : "min");
    std::vector<bool> mask(static_cast<size_t>(x.dim()), false);
    if (x.dim() > 0) mask[d] = true;
    record(is_max ? "MaxBackward" : "MinBackward", {x}, {values},
           [idx = indices, sizes = x.sizes().vec(), mask, d](const TensorList& g, const std::vector<bool>&) {
             if (sizes.empty()) return TensorList{g[0]};
             // one_hot[..., r, ...] = (r == index): positions along dim compared with the index.
             std::vector<int64_t> pos_strides(sizes.size(), 0);
             pos_strides[d] = 1;
             Tensor positions = arange(sizes[d], TensorOptions(kInt64).device(g[0].device()));
             Tensor pos = make_view(positions, sizes, pos_strides, 0);
             Tensor hit = native::eq(pos, expand_reduced(idx, sizes, mask));
             Tensor spread = expand_reduced(g[0], sizes, mask);
             return TensorList{gr::where(hit, spread, 0)};
           });
  }
  return {values, indices};
}

}  // namespace

Tensor max(const Tensor& x) { return full_extremum(x, true); }
Tensor min(const Tensor& x) { return full_extremum(x, false); }
std::tuple<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim) { return dim_extremum(x, dim, keepdim, true); }
std::tuple<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim) { return dim_extremum(x, dim, keepdim, false); }
Tensor argmax(const Tensor& x) { return native::argmax(x); }
Tensor argmax(const Tensor& x, int64_t dim, bool keepdim) { return native::argmax(x, dim, keepdim); }

}  // namespace gr
