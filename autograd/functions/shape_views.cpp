// Views of other shapes, as libtorch has them: view_as, reshape_as, broadcast_to,
// broadcast_tensors, squeeze over dims, unflatten, movedim, meshgrid (compositions of the views
// of views.cpp), and diagonal with its adjoint (diag builds on the pair).
#include <algorithm>

#include "autograd/function.h"
#include "autograd/ops.h"
#include "core/factory.h"
#include "core/native/copy/copy.h"
#include "core/native/shape/rearrange.h"
#include "core/native/elementwise/strided_loop.h"

namespace gr {

using autograd::record;

Tensor Tensor::view_as(const Tensor& other) const { return view(other.sizes()); }
Tensor Tensor::reshape_as(const Tensor& other) const { return reshape(other.sizes()); }
Tensor Tensor::broadcast_to(IntArrayRef size) const { return expand(size); }

std::vector<Tensor> broadcast_tensors(const TensorList& tensors) {
  std::vector<int64_t> shape;
  for (const Tensor& t : tensors) shape = native::broadcast_shapes(shape, t.sizes(), "broadcast_tensors");
  std::vector<Tensor> out;
  for (const Tensor& t : tensors) out.push_back(t.expand(shape));
  return out;
}


// Squeezes the listed dims that have size 1 (others are left alone, as torch).
Tensor Tensor::squeeze(IntArrayRef dims) const {
  std::vector<int64_t> wrapped;
  for (int64_t d : dims) {
    const int64_t w = wrap_dim(d, dim(), "squeeze");
    GR_CHECK(std::find(wrapped.begin(), wrapped.end(), w) == wrapped.end(), "squeeze: dim ", w,
             " appears multiple times in the list of dims ", dims);
    wrapped.push_back(w);
  }
  std::sort(wrapped.rbegin(), wrapped.rend());
  Tensor out = *this;
  for (int64_t d : wrapped) out = out.squeeze(d);
  return dims.empty() ? view(sizes()) : out;
}

Tensor Tensor::unflatten(int64_t dim, IntArrayRef sizes) const {
  const int64_t d = wrap_dim(dim, this->dim(), "unflatten");
  GR_CHECK(!sizes.empty(), "unflatten: sizes must be non-empty");
  int64_t known = 1, infer = -1;
  std::vector<int64_t> inner = sizes.vec();
  for (size_t i = 0; i < inner.size(); ++i) {
    if (inner[i] == -1) {
      GR_CHECK(infer < 0, "unflatten: only one dimension can be inferred, got sizes ", sizes);
      infer = static_cast<int64_t>(i);
    } else {
      GR_CHECK(inner[i] >= 0, "unflatten: invalid size ", inner[i], " in sizes ", sizes);
      known *= inner[i];
    }
  }
  const bool fits = infer >= 0 ? known != 0 && size(d) % known == 0 : known == size(d);
  GR_CHECK(fits, "unflatten: provided sizes ", sizes, " don't multiply up to the size of dim ", d, " (", size(d),
           ") in the input tensor of shape ", this->sizes());
  if (infer >= 0) inner[infer] = size(d) / known;
  std::vector<int64_t> shape = this->sizes().vec();
  shape.erase(shape.begin() + d);
  shape.insert(shape.begin() + d, inner.begin(), inner.end());
  return view(shape);
}

Tensor Tensor::movedim(IntArrayRef source, IntArrayRef destination) const {
  GR_CHECK(source.size() == destination.size(), "movedim: invalid source or destination dims: source (", source,
           ") should contain the same number of dims as destination (", destination, ")");
  const int64_t n = dim();
  std::vector<int64_t> order(std::max<int64_t>(n, 1), -1);
  std::vector<bool> src_used(order.size(), false);
  for (size_t i = 0; i < source.size(); ++i) {
    const int64_t s = wrap_dim(source[i], n, "movedim"), d = wrap_dim(destination[i], n, "movedim");
    GR_CHECK(!src_used[s], "movedim: repeated dim in `source` (", source, ")");
    GR_CHECK(order[d] < 0, "movedim: repeated dim in `destination` (", destination, ")");
    src_used[s] = true;
    order[d] = s;
  }
  if (n == 0) return view(sizes());
  int64_t next_src = 0;
  for (int64_t& o : order) {
    if (o >= 0) continue;
    while (src_used[next_src]) ++next_src;
    o = next_src++;
  }
  return permute(order);
}
Tensor Tensor::movedim(int64_t source, int64_t destination) const { return movedim(IntArrayRef(source), IntArrayRef(destination)); }
Tensor Tensor::moveaxis(IntArrayRef source, IntArrayRef destination) const { return movedim(source, destination); }
Tensor Tensor::moveaxis(int64_t source, int64_t destination) const { return movedim(source, destination); }

std::vector<Tensor> meshgrid(const TensorList& tensors) { return meshgrid(tensors, "ij"); }

std::vector<Tensor> meshgrid(const TensorList& tensors, std::string_view indexing) {
  GR_CHECK(indexing == "ij" || indexing == "xy", "meshgrid: indexing must be one of \"xy\" or \"ij\", but received: ",
           indexing);
  GR_CHECK(!tensors.empty(), "meshgrid: expects a non-empty list of tensors");
  for (size_t i = 0; i < tensors.size(); ++i) {
    GR_CHECK(tensors[i].dim() <= 1, "meshgrid: expected 0D or 1D tensors in the list but got a ", tensors[i].dim(),
             "-d tensor of shape ", tensors[i].sizes(), " at position ", i);
    GR_CHECK(tensors[i].scalar_type() == tensors[0].scalar_type() && tensors[i].device() == tensors[0].device(),
             "meshgrid: expects all tensors to have the same dtype and device, got ", tensors[0].toString(), " and ",
             tensors[i].toString(), " at position ", i);
  }
  // "xy" is "ij" with the first two inputs (and so the first two output dims) swapped.
  TensorList in = tensors;
  const bool swap = indexing == "xy" && in.size() >= 2;
  if (swap) std::swap(in[0], in[1]);
  std::vector<int64_t> shape;
  for (const Tensor& t : in) shape.push_back(t.numel());
  std::vector<Tensor> grids;
  for (size_t i = 0; i < in.size(); ++i) {
    std::vector<int64_t> view_shape(in.size(), 1);
    view_shape[i] = -1;
    grids.push_back(in[i].reshape(view_shape).expand(shape));
  }
  if (swap) std::swap(grids[0], grids[1]);
  return grids;
}

namespace {
// The adjoint of diagonal (torch's diagonal_backward): zeros of `sizes` holding grad on the
// diagonal. Its own backward takes the diagonal again, so both are differentiable twice.
Tensor diagonal_backward(const Tensor& grad, IntArrayRef sizes, int64_t offset, int64_t dim1, int64_t dim2) {
  Tensor out = zeros(sizes, grad.options());
  native::copy_(native::diagonal(out, offset, dim1, dim2), grad);
  if (autograd::needs_grad(grad))
    record("DiagonalBackwardBackward0", {grad}, {out}, [offset, dim1, dim2](const TensorList& g, const std::vector<bool>&) {
      return TensorList{diagonal(g[0], offset, dim1, dim2)};
    });
  return out;
}
}  // namespace

Tensor diagonal(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
  Tensor out = native::diagonal(self, offset, dim1, dim2);
  if (autograd::needs_grad(self))
    record("DiagonalBackward0", {self}, {out},
           [sizes = self.sizes().vec(), offset, dim1, dim2](const TensorList& g, const std::vector<bool>&) {
             return TensorList{diagonal_backward(g[0], sizes, offset, dim1, dim2)};
           }, true);
  return out;
}

// 1-d: a square matrix with self on diagonal k; 2-d: a copy of diagonal k.
Tensor diag(const Tensor& self, int64_t diagonal) {
  GR_CHECK(self.dim() == 1 || self.dim() == 2, "diag: supports 1D or 2D tensors, got a ", self.dim(),
           "-d tensor of shape ", self.sizes());
  if (self.dim() == 2) return gr::diagonal(self, diagonal, 0, 1).clone();
  const int64_t n = self.size(0) + (diagonal < 0 ? -diagonal : diagonal);
  return diagonal_backward(self, {n, n}, diagonal, 0, 1);
}

}  // namespace gr
