// Splits into views, as libtorch has them: chunk, split (one size or a list of sizes),
// split_with_sizes, tensor_split (sections or indices) and unbind. Each part is a narrow, slice
// or select of self, so it shares self's storage and its gradient flows back into place.
// See Note [One node per split].
#include "autograd/function.h"
#include "autograd/ops.h"
#include "core/native/shape/shape.h"

namespace gr {

// Note [One node per split]
// split_with_sizes (hence chunk and split) and unbind record ONE node for all their parts, whose
// backward is a single cat / stack of the parts' gradients (zeros for parts that got none), as
// PyTorch's SplitWithSizesBackward and UnbindBackward. Recording each part as its own narrow
// or select would make every part's backward allocate and fill a zero tensor of self's whole
// shape: an RNN that unbinds its [T, B, G] input projection into T steps would then spend
// O(T^2 B G) in backward instead of O(T B G).

namespace {

// When the parts' gradients already lie side by side along dim d in one storage (same
// strides, each starting where the previous one ends: Note [Packed qkv gradients]), the
// gradient of the whole is a view over them, with no copy. Undefined otherwise, and under
// create_graph (cat keeps the history).
Tensor adjacent_parts(const TensorList& g, int64_t d, const std::vector<int64_t>& sizes) {
  if (g.empty() || !g[0].defined() || autograd::needs_grad_list(g)) return {};
  int64_t offset = g[0].storage_offset();
  for (const Tensor& t : g) {
    if (!t.defined() || !t.storage().is_same(g[0].storage()) || t.strides() != g[0].strides() ||
        t.scalar_type() != g[0].scalar_type() || t.storage_offset() != offset)
      return {};
    offset += t.size(d) * t.stride(d);
  }
  return make_view(g[0], sizes, g[0].strides().vec(), g[0].storage_offset());
}

// `node`: split.Tensor is SplitBackward0 (chunk calls it), split_with_sizes SplitWithSizesBackward0.
std::vector<Tensor> split_parts(const char* node, const Tensor& self, IntArrayRef split_sizes, int64_t dim) {
  GR_CHECK(self.dim() > 0, "split_with_sizes: expected a tensor with at least one dimension, got a 0-d tensor");
  const int64_t d = wrap_dim(dim, self.dim(), "split_with_sizes");
  int64_t total = 0;
  for (int64_t s : split_sizes) {
    GR_CHECK(s >= 0, "split_with_sizes: expects split_sizes to have only non-negative entries, got ", split_sizes);
    total += s;
  }
  GR_CHECK(total == self.size(d), "split_with_sizes: expects split_sizes to sum exactly to ", self.size(d),
           " (input tensor's size at dimension ", d, "), but got split_sizes=", split_sizes);
  std::vector<Tensor> parts;
  int64_t at = 0;
  for (int64_t s : split_sizes) {
    parts.push_back(native::narrow(self, d, at, s));
    at += s;
  }
  if (autograd::needs_grad(self) && !parts.empty())
    autograd::record(node, {self}, parts,
                     [d, sizes = self.sizes().vec()](const TensorList& g, const std::vector<bool>&) {
                       if (Tensor whole = adjacent_parts(g, d, sizes); whole.defined()) return TensorList{whole};
                       return TensorList{cat(g, d)};
                     }, true);
  return parts;
}

}  // namespace

std::vector<Tensor> Tensor::split_with_sizes(IntArrayRef split_sizes, int64_t dim) const {
  return split_parts("SplitWithSizesBackward0", *this, split_sizes, dim);
}

std::vector<Tensor> Tensor::split(int64_t split_size, int64_t dim) const {
  GR_CHECK(this->dim() > 0, "split: expected a tensor with at least one dimension, got a 0-d tensor");
  GR_CHECK(split_size >= 0, "split: expects split_size be non-negative, but got split_size=", split_size);
  const int64_t d = wrap_dim(dim, this->dim(), "split"), n = size(d);
  GR_CHECK(split_size > 0 || n == 0, "split: split_size can only be 0 if dimension size is 0, but got dimension size of ",
           n);
  const int64_t parts = split_size == 0 ? 1 : std::max<int64_t>((n + split_size - 1) / split_size, 1);
  std::vector<int64_t> sizes(parts, split_size);
  sizes.back() = n - split_size * (parts - 1);
  return split_parts("SplitBackward0", *this, sizes, d);
}

std::vector<Tensor> Tensor::split(IntArrayRef split_sizes, int64_t dim) const { return split_with_sizes(split_sizes, dim); }

std::vector<Tensor> Tensor::chunk(int64_t chunks, int64_t dim) const {
  GR_CHECK(this->dim() > 0, "chunk: expects at least a 1-dimensional tensor, got a 0-d tensor");
  GR_CHECK(chunks > 0, "chunk: expects `chunks` to be greater than 0, got: ", chunks);
  const int64_t d = wrap_dim(dim, this->dim(), "chunk"), n = size(d);
  const int64_t split_size = (n + chunks - 1) / chunks;
  // An empty dim still gives `chunks` (empty) parts, as torch.
  if (split_size == 0 && n == 0) return split_with_sizes(std::vector<int64_t>(chunks, 0), d);
  return split(split_size, d);
}

std::vector<Tensor> Tensor::tensor_split(int64_t sections, int64_t dim) const {
  GR_CHECK(this->dim() > 0, "tensor_split: expected at least a 1-dimensional tensor, but got a 0-d tensor");
  GR_CHECK(sections > 0, "tensor_split: number of sections must be larger than 0, got ", sections);
  const int64_t d = wrap_dim(dim, this->dim(), "tensor_split"), n = size(d);
  std::vector<int64_t> sizes(sections, n / sections);
  for (int64_t i = 0; i < n % sections; ++i) ++sizes[i];
  return split_with_sizes(sizes, d);
}

std::vector<Tensor> Tensor::tensor_split(IntArrayRef indices, int64_t dim) const {
  GR_CHECK(this->dim() > 0, "tensor_split: expected at least a 1-dimensional tensor, but got a 0-d tensor");
  const int64_t d = wrap_dim(dim, this->dim(), "tensor_split");
  std::vector<Tensor> parts;
  int64_t start = 0;
  for (int64_t end : indices) {
    parts.push_back(slice(d, start, end));
    start = end;
  }
  parts.push_back(slice(d, start, size(d)));
  return parts;
}

std::vector<Tensor> Tensor::unbind(int64_t dim) const {
  GR_CHECK(this->dim() > 0, "unbind: dimension specified as ", dim, " but tensor has no dimensions");
  const int64_t d = wrap_dim(dim, this->dim(), "unbind");
  std::vector<Tensor> parts;
  for (int64_t i = 0; i < size(d); ++i) parts.push_back(native::select(*this, d, i));
  if (autograd::needs_grad(*this) && !parts.empty())
    autograd::record("UnbindBackward0", {*this}, parts, [d](const TensorList& g, const std::vector<bool>&) {
      return TensorList{stack(g, d)};
    }, true);
  return parts;
}


}  // namespace gr
