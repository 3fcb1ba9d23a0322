// Tensor::index and Tensor::index_put_ with gr::indexing::TensorIndex, following libtorch's
// TensorIndexing.h step by step: integers select, slices slice, None and bools add a dim,
// "..." skips dims (all views of self); index tensors and masks are collected, one entry per
// dim they start at, and go to advanced indexing (advanced_index.cpp) on the sliced view.
#include "autograd/function.h"
#include "autograd/ops.h"
#include "core/factory.h"

namespace gr {

using namespace indexing;
using autograd::record;

namespace {

bool is_mask(const Tensor& t) { return t.scalar_type() == kBool || t.scalar_type() == kUInt8; }

// The dims of self the expression names (everything but None, "..." and bools).
int64_t count_specified_dims(const std::vector<TensorIndex>& indices) {
  int64_t count = 0;
  for (const TensorIndex& i : indices) {
    if (i.is_tensor()) count += is_mask(i.tensor()) ? i.tensor().dim() : 1;
    else if (!i.is_none() && !i.is_ellipsis() && !i.is_boolean()) ++count;
  }
  return count;
}

Tensor apply_select(const Tensor& t, int64_t dim, int64_t index, int64_t real_dim) {
  GR_CHECK(!(index == 0 && dim == 0 && t.dim() == 0), "index: invalid index of a 0-dim tensor. Use `tensor.item()` in ",
           "Python or `tensor.item<T>()` in C++ to convert a 0-dim tensor to a number");
  const int64_t size = t.size(dim);
  GR_CHECK(index >= -size && index < size, "index: index ", index, " is out of bounds for dimension ", real_dim,
           " with size ", size);
  return t.select(dim, index);
}

Tensor apply_slice(const Tensor& t, int64_t dim, const Slice& s, bool keep_whole) {
  GR_CHECK(s.step() > 0, "index: step must be greater than zero, got ", s.step());
  if (!keep_whole && t.dim() > 0 && s.start() == 0 && t.size(dim) <= s.stop() && s.step() == 1) return t;
  return t.slice(dim, s.start(), s.stop(), s.step());
}

// A bool as an index on the new dim it adds: [0] (True) or [] (False).
Tensor bool_index(bool value, const Tensor& like) {
  TensorOptions options = TensorOptions(kInt64).device(like.device());
  return value ? zeros({1}, options) : empty({0}, options);
}

void record_index(const Tensor& t, std::vector<std::optional<Tensor>>& out, int64_t& dim) {
  if (out.empty()) out.resize(dim + 1);
  else out.emplace_back();
  out.back() = t;
  dim += is_mask(t) ? t.dim() : 1;
}

// libtorch's applySlicing: the view of self the basic entries make; the tensor entries go to `out`.
Tensor apply_slicing(const Tensor& self, const std::vector<TensorIndex>& indices,
                     std::vector<std::optional<Tensor>>& out) {
  const int64_t specified = count_specified_dims(indices);
  GR_CHECK(specified <= self.dim(), "index: too many indices for tensor of dimension ", self.dim(), " (index ",
           indices, ")");
  int64_t ellipses = 0;
  for (const TensorIndex& i : indices) ellipses += i.is_ellipsis();
  GR_CHECK(ellipses <= 1, "index: an index can only have a single ellipsis (index ", indices, ")");
  Tensor result = self;
  int64_t dim = 0;
  auto skip = [&](int64_t n) {
    dim += n;
    if (!out.empty()) out.resize(out.size() + n);
  };
  for (size_t i = 0; i < indices.size(); ++i) {
    const TensorIndex& index = indices[i];
    const int64_t real_dim = static_cast<int64_t>(i);
    if (index.is_integer()) {
      result = apply_select(result, dim, index.integer(), real_dim);
    } else if (index.is_slice()) {
      result = apply_slice(result, dim, index.slice(), false);
      skip(1);
    } else if (index.is_ellipsis()) {
      skip(self.dim() - specified);
    } else if (index.is_none()) {
      result = result.unsqueeze(dim);
      skip(1);
    } else if (index.is_boolean()) {
      result = result.unsqueeze(dim);
      record_index(bool_index(index.boolean(), self), out, dim);
    } else {
      const Tensor& t = index.tensor();
      GR_CHECK(t.defined(), "index: undefined tensor in the index (", indices, ")");
      // As libtorch's applySlicing: a 0-d integer tensor selects, a 0-d mask adds a dim.
      if (t.dim() == 0 && is_integral(t.scalar_type(), /*include_bool=*/true)) {
        if (!is_mask(t)) {
          result = apply_select(result, dim, t.item<int64_t>(), real_dim);
        } else {
          result = result.unsqueeze(dim);
          record_index(bool_index(t.item<bool>(), self), out, dim);
        }
      } else {
        record_index(t, out, dim);
      }
    }
  }
  return result;
}

void strip_trailing(std::vector<std::optional<Tensor>>& out) {
  while (!out.empty() && !out.back()) out.pop_back();
}

Tensor get_item(const Tensor& self, const std::vector<TensorIndex>& indices) {
  if (indices.size() == 1) {
    const TensorIndex& index = indices[0];
    if (index.is_integer()) return apply_select(self, 0, index.integer(), 0);
    if (index.is_slice()) return apply_slice(self, 0, index.slice(), true);
    if (index.is_none()) return self.unsqueeze(0);
    if (index.is_ellipsis()) return self.view(self.sizes());
    if (index.is_boolean()) return gr::index(self.unsqueeze(0), {bool_index(index.boolean(), self)});
  }
  std::vector<std::optional<Tensor>> tensors;
  Tensor sliced = apply_slicing(self, indices, tensors);
  strip_trailing(tensors);
  if (tensors.empty()) return sliced.is_same(self) ? self.view(self.sizes()) : sliced;
  return gr::index(sliced, tensors);
}

// The sizes without their leading 1s (a value [1, 1, 3] sets like [3]).
std::vector<int64_t> without_leading_ones(IntArrayRef sizes) {
  size_t i = 0;
  while (i < sizes.size() && sizes[i] == 1) ++i;
  return std::vector<int64_t>(sizes.begin() + i, sizes.end());
}

// libtorch's copy_to: dst = src, src broadcast to dst after dropping its leading 1s.
void copy_to(Tensor dst, const Tensor& src) {
  if (dst.sizes() == src.sizes() || src.dim() == 0) {
    dst.copy_(src);
    return;
  }
  Tensor v = src.view(without_leading_ones(src.sizes()));
  bool fits = v.dim() <= dst.dim();
  for (int64_t i = 1; fits && i <= v.dim(); ++i) fits = v.size(-i) == dst.size(-i) || v.size(-i) == 1;
  GR_CHECK(fits, "index_put_: shape mismatch: value tensor of shape ", src.sizes(),
           " cannot be broadcast to indexing result of shape ", dst.sizes());
  dst.copy_(v.expand(dst.sizes()));
}

// libtorch's set_item, without history (the caller records it for the whole of self).
void set_item(const Tensor& self, const std::vector<TensorIndex>& indices, const Tensor& value) {
  if (indices.size() == 1) {
    const TensorIndex& index = indices[0];
    if (index.is_boolean() && !index.boolean()) return;
    if (index.is_ellipsis()) return copy_to(self, value);
    if (index.is_none() || index.is_boolean()) return copy_to(self.unsqueeze(0), value);
    if (index.is_integer()) return copy_to(apply_select(self, 0, index.integer(), 0), value);
    if (index.is_slice()) return copy_to(apply_slice(self, 0, index.slice(), false), value);
  }
  std::vector<std::optional<Tensor>> tensors;
  Tensor sliced = apply_slicing(self, indices, tensors);
  strip_trailing(tensors);
  if (tensors.empty()) return copy_to(sliced, value);
  gr::index_put_(sliced, tensors, value.view(without_leading_ones(value.sizes())));
}

// Note [index_put_ with TensorIndex]
// The write goes through views of self, which autograd cannot follow in place (check_inplace),
// so it runs without history and one node is recorded for self as a whole: self's gradient is
// the incoming one with the written region zeroed (itself an index_put_, so differentiable),
// the value's the incoming one indexed the same way, summed back to the value's shape.
Tensor& put(const Tensor& self, const std::vector<TensorIndex>& indices, const Tensor& value) {
  const bool history = autograd::needs_grad(self, value);
  if (history) autograd::check_inplace(self, "index_put_");
  {
    NoGradGuard no_grad;
    set_item(self, indices, value);
  }
  if (history)
    record("IndexPutBackward0", {self, value}, {self},
           [indices, shape = value.sizes().vec(), dtype = value.scalar_type()](const TensorList& g,
                                                                              const std::vector<bool>& needs) {
             Tensor gself, gvalue;
             if (needs[0]) {
               gself = g[0].clone();
               gself.index_put_(indices, 0);
             }
             if (needs[1]) {
               Tensor region = get_item(g[0], indices);
               gvalue = autograd::sum_to(region, without_leading_ones(shape)).reshape(shape).to(dtype);
             }
             return TensorList{gself, gvalue};
           });
  return const_cast<Tensor&>(self);
}

}  // namespace

Tensor Tensor::index(std::initializer_list<TensorIndex> indices) const { return get_item(*this, indices); }
Tensor Tensor::index(const std::vector<TensorIndex>& indices) const { return get_item(*this, indices); }

Tensor& Tensor::index_put_(std::initializer_list<TensorIndex> indices, const Tensor& rhs) const {
  return put(*this, indices, rhs);
}
Tensor& Tensor::index_put_(const std::vector<TensorIndex>& indices, const Tensor& rhs) const {
  return put(*this, indices, rhs);
}
Tensor& Tensor::index_put_(std::initializer_list<TensorIndex> indices, const Scalar& v) const {
  return put(*this, indices, full({}, v, options()));
}
Tensor& Tensor::index_put_(const std::vector<TensorIndex>& indices, const Scalar& v) const {
  return put(*this, indices, full({}, v, options()));
}

}  // namespace gr
