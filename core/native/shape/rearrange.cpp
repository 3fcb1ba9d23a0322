// diagonal (a view), flip (a copy through a view with negative strides), roll (two region
// copies per dim) and the tril/triu masks.
#include "core/native/shape/rearrange.h"

#include "core/factory.h"
#include "core/native/copy/copy.h"
#include "core/native/shape/shape.h"

namespace gr::native {

Tensor diagonal(const Tensor& t, int64_t offset, int64_t dim1, int64_t dim2) {
  GR_CHECK(t.dim() >= 2, "diagonal: expected a tensor with at least 2 dimensions, got ", t.dim(), "-d of shape ",
           t.sizes());
  const int64_t d1 = wrap_dim(dim1, t.dim(), "diagonal"), d2 = wrap_dim(dim2, t.dim(), "diagonal");
  GR_CHECK(d1 != d2, "diagonal: diagonal dimensions cannot be identical ", dim1, ", ", dim2);
  int64_t length, start = t.storage_offset();
  if (offset >= 0) {
    length = std::max<int64_t>(std::min(t.size(d1), t.size(d2) - offset), 0);
    if (length > 0) start += offset * t.stride(d2);
  } else {
    length = std::max<int64_t>(std::min(t.size(d1) + offset, t.size(d2)), 0);
    if (length > 0) start -= offset * t.stride(d1);
  }
  std::vector<int64_t> sizes, strides;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (d != d1 && d != d2) sizes.push_back(t.size(d)), strides.push_back(t.stride(d));
  sizes.push_back(length);
  strides.push_back(t.stride(d1) + t.stride(d2));
  return make_view(t, sizes, strides, start);
}

Tensor flip(const Tensor& t, IntArrayRef dims) {
  std::vector<bool> flipped(std::max<int64_t>(t.dim(), 1), false);
  for (int64_t d : dims) {
    const int64_t w = wrap_dim(d, t.dim(), "flip");
    GR_CHECK(!flipped[w], "flip: dims has duplicates, got ", dims);
    flipped[w] = true;
  }
  Tensor out = empty(t.sizes(), t.options());
  if (t.numel() == 0) return out;
  // The source read backwards along the flipped dims; it never leaves this function.
  std::vector<int64_t> strides = t.strides().vec();
  int64_t offset = t.storage_offset();
  for (int64_t d = 0; d < t.dim(); ++d)
    if (flipped[d]) offset += (t.size(d) - 1) * strides[d], strides[d] = -strides[d];
  copy_(out, make_view(t, t.sizes().vec(), strides, offset));
  return out;
}

Tensor roll(const Tensor& t, IntArrayRef shifts, IntArrayRef dims) {
  if (dims.empty()) {
    GR_CHECK(shifts.size() == 1, "roll: shifts and dimensions must align: got ", shifts.size(),
             " shifts and no dims (one shift rolls the flattened tensor)");
    return reshape(roll(reshape(t, {-1}), shifts, {0}), t.sizes());
  }
  GR_CHECK(shifts.size() == dims.size(), "roll: shifts and dimensions must align: got ", shifts.size(),
           " shifts and ", dims.size(), " dims");
  Tensor in = t;
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = wrap_dim(dims[i], t.dim(), "roll"), n = t.size(d);
    Tensor out = empty(t.sizes(), t.options());
    if (t.numel() == 0) return out;
    const int64_t s = ((shifts[i] % n) + n) % n;
    copy_(narrow(out, d, s, n - s), narrow(in, d, 0, n - s));
    copy_(narrow(out, d, 0, s), narrow(in, d, n - s, s));
    in = out;
  }
  return in;
}

Tensor triangle_mask(int64_t rows, int64_t cols, int64_t k, bool lower, Device device) {
  Tensor mask = empty({rows, cols}, TensorOptions(kBool));
  bool* m = mask.data_ptr<bool>();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) m[r * cols + c] = lower ? c - r <= k : c - r >= k;
  return to_device(mask, device);
}

}  // namespace gr::native
