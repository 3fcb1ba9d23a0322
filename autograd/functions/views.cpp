// Differentiable views (view, reshape, permute, transpose, slice, narrow, select, expand,
// squeeze, unsqueeze, flatten): the output shares storage; backward maps the gradient back.
#include "autograd/function.h"
#include "autograd/ops.h"
#include "core/factory.h"
#include "core/native/copy/copy.h"
#include "core/native/reduce/reduce.h"
#include "core/native/shape/shape.h"

namespace gr {

using autograd::record;

namespace {

// Records a view whose gradient is the output gradient reshaped to the input's shape.
Tensor reshaping_view(const char* name, const Tensor& self, Tensor out) {
  if (autograd::needs_grad(self))
    record(name, {self}, {out}, [shape = self.sizes().vec()](const TensorList& g, const std::vector<bool>&) {
      return TensorList{g[0].reshape(shape)};
    }, true);
  return out;
}

// The gradient of a region view (slice/narrow/select): zeros of the input's shape with g
// in the region. Linear in g; its own backward takes the region of the incoming gradient
// (the view again), so region views are differentiable to any order.
template <class RegionOf>
Tensor region_scatter(const char* name, const Tensor& g, const std::vector<int64_t>& shape, RegionOf region_of) {
  Tensor full = zeros(shape, g.options());
  native::copy_(region_of(full), g);
  if (autograd::needs_grad(g))
    record(name, {g}, {full}, [region_of](const TensorList& gg, const std::vector<bool>&) {
      return TensorList{region_of(gg[0])};
    });
  return full;
}

// Records a view of a region; region_of(t) takes the same region of t with Tensor's
// (differentiable) view methods.
template <class RegionOf>
Tensor region_view(const char* name, const char* backward_name, const Tensor& self, Tensor out, RegionOf region_of) {
  if (autograd::needs_grad(self))
    record(name, {self}, {out}, [shape = self.sizes().vec(), region_of, backward_name](const TensorList& g,
                                                                                     const std::vector<bool>&) {
      return TensorList{region_scatter(backward_name, g[0], shape, region_of)};
    }, true);
  return out;
}

}  // namespace

Tensor Tensor::view(IntArrayRef shape) const { return reshaping_view("ViewBackward0", *this, native::view(*this, shape)); }

Tensor Tensor::reshape(IntArrayRef shape) const {
  std::vector<int64_t> sizes = native::infer_size(shape, numel(), "reshape");
  if (native::view_strides(this->sizes(), strides(), sizes)) return view(sizes);
  return contiguous().view(sizes);
}

Tensor Tensor::permute(IntArrayRef dims) const {
  Tensor out = native::permute(*this, dims);
  if (autograd::needs_grad(*this))
    record("PermuteBackward0", {*this}, {out},
           [inv = native::inverse_permutation(dims)](const TensorList& g, const std::vector<bool>&) {
             return TensorList{g[0].permute(inv)};
           }, true);
  return out;
}

namespace {
// t() is its own ATen op (TBackward0), not transpose.int (TransposeBackward0).
Tensor transposed(const char* name, const Tensor& self, int64_t d0, int64_t d1) {
  Tensor out = native::transpose(self, d0, d1);
  if (autograd::needs_grad(self))
    record(name, {self}, {out}, [d0, d1](const TensorList& g, const std::vector<bool>&) {
      return TensorList{g[0].transpose(d0, d1)};
    }, true);
  return out;
}
}  // namespace

Tensor Tensor::transpose(int64_t d0, int64_t d1) const { return transposed("TransposeBackward0", *this, d0, d1); }

Tensor Tensor::t() const {
  GR_CHECK(dim() <= 2, "t(): expects a tensor with <= 2 dimensions, but self is ", dim(), "D");
  return dim() < 2 ? reshaping_view("TBackward0", *this, native::view(*this, sizes())) : transposed("TBackward0", *this, 0, 1);
}

Tensor Tensor::slice(int64_t d, int64_t start, int64_t end, int64_t step) const {
  return region_view("SliceBackward0", "SliceBackwardBackward0", *this, native::slice(*this, d, start, end, step),
                     [d, start, end, step](const Tensor& t) { return t.slice(d, start, end, step); });
}

Tensor Tensor::narrow(int64_t d, int64_t start, int64_t length) const {
  Tensor out = native::narrow(*this, d, start, length);
  int64_t s = start < 0 ? start + size(d) : start;
  return region_view("SliceBackward0", "SliceBackwardBackward0", *this, out,
                     [d, s, length](const Tensor& t) { return t.narrow(d, s, length); });
}

Tensor Tensor::select(int64_t d, int64_t index) const {
  return region_view("SelectBackward0", "SelectBackwardBackward0", *this, native::select(*this, d, index),
                     [d, index](const Tensor& t) { return t.select(d, index); });
}

Tensor Tensor::expand(IntArrayRef shape) const {
  Tensor out = native::expand(*this, shape);
  if (autograd::needs_grad(*this))
    record("ExpandBackward0", {*this}, {out}, [in = sizes().vec()](const TensorList& g, const std::vector<bool>&) {
      return TensorList{autograd::sum_to(g[0], in)};
    }, true);
  return out;
}

Tensor Tensor::squeeze() const { return reshaping_view("SqueezeBackward0", *this, native::squeeze(*this)); }
Tensor Tensor::squeeze(int64_t d) const { return reshaping_view("SqueezeBackward1", *this, native::squeeze(*this, d)); }
Tensor Tensor::unsqueeze(int64_t d) const {
  return reshaping_view("UnsqueezeBackward0", *this, native::unsqueeze(*this, d));
}

Tensor Tensor::flatten(int64_t start_dim, int64_t end_dim) const {
  if (dim() == 0) return reshape({1});
  int64_t s = wrap_dim(start_dim, dim(), "flatten"), e = wrap_dim(end_dim, dim(), "flatten");
  GR_CHECK(s <= e, "flatten: start_dim (", s, ") cannot come after end_dim (", e, ")");
  std::vector<int64_t> shape;
  int64_t merged = 1;
  for (int64_t d = 0; d < dim(); ++d) {
    if (d < s || d > e) shape.push_back(size(d));
    else merged *= size(d);
    if (d == e) shape.push_back(merged);
  }
  return reshape(shape);
}

}  // namespace gr
