// View arithmetic (sizes/strides/offset) and concatenation.
#include "core/native/shape/shape.h"

#include "core/factory.h"
#include "core/native/copy/copy.h"

namespace gr::native {

std::vector<int64_t> infer_size(IntArrayRef shape, int64_t numel, const char* op) {
  std::vector<int64_t> out = shape.vec();
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      GR_CHECK(infer < 0, op, ": only one dimension can be inferred, got shape ", shape);
      infer = static_cast<int64_t>(i);
    } else {
      GR_CHECK(out[i] >= 0, op, ": invalid shape dimension ", out[i], " in ", shape);
      known *= out[i];
    }
  }
  if (infer >= 0) {
    GR_CHECK(known != 0 && numel % known == 0, op, ": shape ", shape, " is invalid for input of size ", numel);
    out[infer] = numel / known;
  } else {
    GR_CHECK(known == numel, op, ": shape ", shape, " is invalid for input of size ", numel);
  }
  return out;
}

std::optional<std::vector<int64_t>> view_strides(IntArrayRef sizes, IntArrayRef strides, IntArrayRef new_sizes) {
  std::vector<int64_t> out(new_sizes.size());
  int64_t numel = 1;
  for (int64_t s : sizes) numel *= s;
  if (numel == 0 || sizes.empty()) return contiguous_strides(new_sizes);
  // Walk old dims in chunks that are contiguous among themselves; each chunk must map
  // onto a run of new dims with the same element count.
  int64_t view_d = static_cast<int64_t>(new_sizes.size()) - 1;
  int64_t chunk_base_stride = strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    tensor_numel *= sizes[d];
    if (d == 0 || (sizes[d - 1] != 1 && strides[d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_sizes[view_d] == 1)) {
        out[view_d] = view_numel * chunk_base_stride;
        view_numel *= new_sizes[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (d > 0) {
        chunk_base_stride = strides[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return out;
}

Tensor view(const Tensor& t, IntArrayRef shape) {
  std::vector<int64_t> sizes = infer_size(shape, t.numel(), "view");
  auto strides = view_strides(t.sizes(), t.strides(), sizes);
  GR_CHECK(strides.has_value(), "view: size ", IntArrayRef(sizes), " is not compatible with input tensor's size ",
           t.sizes(), " and strides ", t.strides(), " (at least one dimension spans across two contiguous subspaces); "
           "use reshape() instead");
  return make_view(t, sizes, *strides, t.storage_offset());
}

Tensor reshape(const Tensor& t, IntArrayRef shape) {
  std::vector<int64_t> sizes = infer_size(shape, t.numel(), "reshape");
  if (auto strides = view_strides(t.sizes(), t.strides(), sizes)) return make_view(t, sizes, *strides, t.storage_offset());
  Tensor c = clone(t);
  return make_view(c, sizes, contiguous_strides(sizes), 0);
}

Tensor permute(const Tensor& t, IntArrayRef dims) {
  GR_CHECK(static_cast<int64_t>(dims.size()) == t.dim(), "permute: number of dims in ", dims,
           " doesn't match the tensor's ", t.dim(), " dims");
  std::vector<int64_t> sizes(dims.size()), strides(dims.size());
  std::vector<bool> seen(dims.size(), false);
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = wrap_dim(dims[i], t.dim(), "permute");
    GR_CHECK(!seen[d], "permute: dim ", d, " repeats in ", dims);
    seen[d] = true;
    sizes[i] = t.size(d);
    strides[i] = t.stride(d);
  }
  return make_view(t, sizes, strides, t.storage_offset());
}

std::vector<int64_t> inverse_permutation(IntArrayRef dims) {
  std::vector<int64_t> inv(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) inv[wrap_dim(dims[i], static_cast<int64_t>(dims.size()))] = static_cast<int64_t>(i);
  return inv;
}

Tensor transpose(const Tensor& t, int64_t d0, int64_t d1) {
  if (t.dim() == 0) return make_view(t, {}, {}, t.storage_offset());
  d0 = wrap_dim(d0, t.dim(), "transpose");
  d1 = wrap_dim(d1, t.dim(), "transpose");
  std::vector<int64_t> sizes = t.sizes().vec(), strides = t.strides().vec();
  std::swap(sizes[d0], sizes[d1]);
  std::swap(strides[d0], strides[d1]);
  return make_view(t, sizes, strides, t.storage_offset());
}

Tensor slice(const Tensor& t, int64_t dim, int64_t start, int64_t end, int64_t step) {
  GR_CHECK(t.dim() > 0, "slice: cannot slice a 0-d tensor");
  int64_t d = wrap_dim(dim, t.dim(), "slice");
  GR_CHECK(step > 0, "slice: step must be positive, got ", step);
  int64_t n = t.size(d);
  if (start < 0) start += n;
  if (end < 0) end += n;
  start = std::clamp<int64_t>(start, 0, n);
  end = std::clamp<int64_t>(end, start, n);
  std::vector<int64_t> sizes = t.sizes().vec(), strides = t.strides().vec();
  sizes[d] = (end - start + step - 1) / step;
  strides[d] *= step;
  return make_view(t, sizes, strides, t.storage_offset() + start * t.stride(d));
}

Tensor narrow(const Tensor& t, int64_t dim, int64_t start, int64_t length) {
  GR_CHECK(t.dim() > 0, "narrow: cannot narrow a 0-d tensor");
  int64_t d = wrap_dim(dim, t.dim(), "narrow");
  int64_t n = t.size(d);
  if (start < 0) start += n;
  GR_CHECK(start >= 0 && length >= 0 && start + length <= n, "narrow: start (", start, ") + length (", length,
           ") exceeds dimension size (", n, ") of dim ", d);
  return slice(t, d, start, start + length);
}

Tensor select(const Tensor& t, int64_t dim, int64_t index) {
  GR_CHECK(t.dim() > 0, "select: cannot select from a 0-d tensor");
  int64_t d = wrap_dim(dim, t.dim(), "select");
  int64_t n = t.size(d);
  GR_CHECK(index >= -n && index < n, "select: index ", index, " out of range for dimension ", d, " with size ", n);
  if (index < 0) index += n;
  std::vector<int64_t> sizes = t.sizes().vec(), strides = t.strides().vec();
  int64_t offset = t.storage_offset() + index * strides[d];
  sizes.erase(sizes.begin() + d);
  strides.erase(strides.begin() + d);
  return make_view(t, sizes, strides, offset);
}

Tensor expand(const Tensor& t, IntArrayRef shape) {
  GR_CHECK(static_cast<int64_t>(shape.size()) >= t.dim(), "expand: the number of sizes provided (", shape.size(),
           ") must be greater or equal to the number of dimensions in the tensor (", t.dim(), ")");
  const int64_t lead = static_cast<int64_t>(shape.size()) - t.dim();
  std::vector<int64_t> sizes(shape.size()), strides(shape.size());
  for (int64_t i = 0; i < static_cast<int64_t>(shape.size()); ++i) {
    if (i < lead) {
      GR_CHECK(shape[i] >= 0, "expand: -1 is not allowed in a leading, non-existing dimension (", i, ")");
      sizes[i] = shape[i];
      strides[i] = 0;
      continue;
    }
    int64_t have = t.size(i - lead), want = shape[i] == -1 ? have : shape[i];
    GR_CHECK(have == want || have == 1, "expand: the expanded size of the tensor (", want,
             ") must match the existing size (", have, ") at non-singleton dimension ", i, ". Target sizes: ", shape,
             ". Tensor sizes: ", t.sizes());
    sizes[i] = want;
    strides[i] = have == want ? t.stride(i - lead) : 0;
  }
  return make_view(t, sizes, strides, t.storage_offset());
}

Tensor squeeze(const Tensor& t) {
  std::vector<int64_t> sizes, strides;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.size(d) != 1) sizes.push_back(t.size(d)), strides.push_back(t.stride(d));
  return make_view(t, sizes, strides, t.storage_offset());
}

Tensor squeeze(const Tensor& t, int64_t dim) {
  if (t.dim() == 0) return make_view(t, {}, {}, t.storage_offset());
  int64_t d = wrap_dim(dim, t.dim(), "squeeze");
  if (t.size(d) != 1) return make_view(t, t.sizes().vec(), t.strides().vec(), t.storage_offset());
  std::vector<int64_t> sizes = t.sizes().vec(), strides = t.strides().vec();
  sizes.erase(sizes.begin() + d);
  strides.erase(strides.begin() + d);
  return make_view(t, sizes, strides, t.storage_offset());
}

Tensor unsqueeze(const Tensor& t, int64_t dim) {
  int64_t d = wrap_dim(dim, t.dim() + 1, "unsqueeze");
  std::vector<int64_t> sizes = t.sizes().vec(), strides = t.strides().vec();
  int64_t stride = d < t.dim() ? sizes[d] * strides[d] : 1;
  sizes.insert(sizes.begin() + d, 1);
  strides.insert(strides.begin() + d, stride);
  return make_view(t, sizes, strides, t.storage_offset());
}

Tensor flatten(const Tensor& t, int64_t start_dim, int64_t end_dim) {
  if (t.dim() == 0) return reshape(t, {1});
  int64_t s = wrap_dim(start_dim, t.dim(), "flatten"), e = wrap_dim(end_dim, t.dim(), "flatten");
  GR_CHECK(s <= e, "flatten: start_dim (", s, ") cannot come after end_dim (", e, ")");
  std::vector<int64_t> shape;
  for (int64_t d = 0; d < s; ++d) shape.push_back(t.size(d));
  int64_t merged = 1;
  for (int64_t d = s; d <= e; ++d) merged *= t.size(d);
  shape.push_back(merged);
  for (int64_t d = e + 1; d < t.dim(); ++d) shape.push_back(t.size(d));
  return reshape(t, shape);
}

Tensor cat(const TensorList& tensors, int64_t dim) {
  GR_CHECK(!tensors.empty(), "cat: expected a non-empty list of tensors");
  const Tensor& first = tensors[0];
  GR_CHECK(first.dim() > 0, "cat: zero-dimensional tensor (at position 0) cannot be concatenated");
  int64_t d = wrap_dim(dim, first.dim(), "cat");
  ScalarType dtype = first.scalar_type();
  int64_t total = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    GR_CHECK(t.dim() == first.dim(), "cat: tensors must have the same number of dimensions: got ", first.dim(),
             " and ", t.dim(), " (at position ", i, ")");
    GR_CHECK(t.device() == first.device(), "cat: expected all tensors on the same device");
    for (int64_t k = 0; k < t.dim(); ++k)
      GR_CHECK(k == d || t.size(k) == first.size(k), "cat: sizes of tensors must match except in dimension ", d,
               ". Expected size ", first.size(k), " but got size ", t.size(k), " for tensor number ", i, " in the list");
    dtype = promote_types(dtype, t.scalar_type());
    total += t.size(d);
  }
  std::vector<int64_t> sizes = first.sizes().vec();
  sizes[d] = total;
  Tensor out = empty(sizes, TensorOptions(dtype).device(first.device()));
  int64_t at = 0;
  for (const Tensor& t : tensors) {
    copy_(narrow(out, d, at, t.size(d)), t);
    at += t.size(d);
  }
  return out;
}

Tensor stack(const TensorList& tensors, int64_t dim) {
  GR_CHECK(!tensors.empty(), "stack: expected a non-empty list of tensors");
  int64_t d = wrap_dim(dim, tensors[0].dim() + 1, "stack");
  TensorList parts;
  for (size_t i = 0; i < tensors.size(); ++i) {
    GR_CHECK(tensors[i].sizes() == tensors[0].sizes(), "stack: expects each tensor to be equal size, but got ",
             tensors[0].sizes(), " at entry 0 and ", tensors[i].sizes(), " at entry ", i);
    parts.push_back(unsqueeze(tensors[i], d));
  }
  return cat(parts, d);
}

}  // namespace gr::native
