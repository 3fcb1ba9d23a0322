// Advanced indexing (index, index_put_) by NumPy's rules. See Note [Advanced indexing].
#include <limits>
#include <sstream>

#include "core/deterministic.h"
#include "core/factory.h"
#include "core/native/copy.h"
#include "core/native/index_ops.h"
#include "core/native/shape.h"

namespace gr::native {

GR_DEFINE_DISPATCH(IndexOffsetsFn, index_offsets_stub);

namespace {

// Note [Advanced indexing]
// indices hold one entry per leading dim of self. A bool mask stands for the columns of its
// nonzero(), one per dim it covers. The index tensors broadcast to one shape B. When the
// indexed dims are adjacent, B replaces them in place in the result; otherwise self is viewed
// with them moved to the front (in order) and B leads the result. The element at B-position
// b reads (or writes) self at offset sum_k index_k[b] * stride_k (negative indices count from
// the end); those offsets are computed once, as an int64 tensor over B, and one gather (or
// scatter) pass over the result shape adds them to the other dims' strides. A single index
// tensor needs no offsets: that is index_select (index_add/index_copy for index_put_).
struct AdvancedIndex {
  Tensor src;                   // self, the indexed dims moved to the front if not adjacent
  std::vector<Tensor> indices;  // for dims first .. first + k - 1 of src, broadcast to index_shape
  std::vector<int64_t> dims;    // the dim of self each of them indexes (for errors)
  int64_t first = 0;
  std::vector<int64_t> index_shape, result_shape;
};

std::string shapes_of(const std::vector<Tensor>& ts) {
  std::ostringstream out;
  bool any = false;
  for (const Tensor& t : ts)
    if (t.defined()) out << (any ? ", " : "") << t.sizes(), any = true;
  return out.str();
}

AdvancedIndex make_info(const Tensor& self, const std::vector<Tensor>& indices, const char* op) {
  std::vector<Tensor> per_dim;
  for (size_t i = 0; i < indices.size(); ++i) {
    const Tensor& t = indices[i];
    if (!t.defined()) {
      per_dim.emplace_back();
    } else if (t.scalar_type() == kBool || t.scalar_type() == kUInt8) {
      const int64_t at = static_cast<int64_t>(per_dim.size());
      GR_CHECK(at + t.dim() <= self.dim(), op, ": too many indices for tensor of dimension ", self.dim(),
               " (a mask of shape ", t.sizes(), " at position ", i, ")");
      for (int64_t j = 0; j < t.dim(); ++j)
        GR_CHECK(t.size(j) == self.size(at + j), op, ": the shape of the mask ", t.sizes(), " at index ", j,
                 " does not match the shape of the indexed tensor ", self.sizes(), " at index ", at + j);
      Tensor nz = nonzero(to_device(t, self.device()));
      for (int64_t j = 0; j < t.dim(); ++j) per_dim.push_back(select(nz, 1, j));
    } else {
      GR_CHECK(is_index_dtype(t.scalar_type()), op, ": tensors used as indices must be int64, int32, uint8 or bool tensors, got ",
               t.scalar_type(), " at position ", i);
      per_dim.push_back(to_device(t, self.device()));
    }
  }
  GR_CHECK(static_cast<int64_t>(per_dim.size()) <= self.dim(), op, ": too many indices for tensor of dimension ",
           self.dim(), " (got ", per_dim.size(), ")");
  AdvancedIndex info;
  int64_t first = -1, last = -1, k = 0;
  bool broadcastable = true;
  for (size_t d = 0; d < per_dim.size(); ++d) {
    if (!per_dim[d].defined()) continue;
    if (first < 0) {
      info.index_shape = per_dim[d].sizes().vec();
      first = static_cast<int64_t>(d);
    } else {
      try {
        info.index_shape = broadcast_shapes(info.index_shape, per_dim[d].sizes(), op);
      } catch (const Error&) {
        broadcastable = false;
      }
    }
    last = static_cast<int64_t>(d);
    ++k;
  }
  GR_CHECK(broadcastable, op, ": shape mismatch: indexing tensors could not be broadcast together with shapes ",
           shapes_of(per_dim));
  if (k == 0) return info;
  info.src = self;
  std::vector<int64_t> order;  // the dims of self in src's order
  for (int64_t d = 0; d < self.dim(); ++d) order.push_back(d);
  if (last - first + 1 != k) {  // not adjacent: indexed dims first
    order.clear();
    for (int64_t d = 0; d < self.dim(); ++d)
      if (d < static_cast<int64_t>(per_dim.size()) && per_dim[d].defined()) order.push_back(d);
    for (int64_t d = 0; d < self.dim(); ++d)
      if (d >= static_cast<int64_t>(per_dim.size()) || !per_dim[d].defined()) order.push_back(d);
    info.src = permute(self, order);
    first = 0;
  }
  info.first = first;
  for (int64_t j = 0; j < k; ++j) {
    info.dims.push_back(order[first + j]);
    info.indices.push_back(per_dim[order[first + j]]);
  }
  for (int64_t d = 0; d < first; ++d) info.result_shape.push_back(info.src.size(d));
  info.result_shape.insert(info.result_shape.end(), info.index_shape.begin(), info.index_shape.end());
  for (int64_t d = first + k; d < self.dim(); ++d) info.result_shape.push_back(info.src.size(d));
  return info;
}

// The int64 element offsets into src of every position of the broadcast index shape.
Tensor index_offsets(const AdvancedIndex& info, const Tensor& self, const char* op) {
  Tensor off = zeros(info.index_shape, TensorOptions(kInt64).device(self.device()));
  for (size_t j = 0; j < info.indices.size(); ++j) {
    const Tensor& index = info.indices[j];
    const int64_t d = info.first + static_cast<int64_t>(j);
    StridedLoop L = make_strided_loop({off, index}, info.index_shape);
    const IndexAxis axis{info.src.size(d), info.src.stride(d), true};
    with_index_errors(op, info.dims[j], self, index,
                      [&] { index_offsets_stub(self.device(), L, index.scalar_type(), axis); });
  }
  return off;
}

// src's strides over the result shape with 0 across the index dims, and the offsets' strides
// over the result shape with 0 across the others.
std::pair<Tensor, Tensor> restrided(const AdvancedIndex& info, const Tensor& off) {
  const int64_t nb = static_cast<int64_t>(info.index_shape.size()), k = static_cast<int64_t>(info.indices.size());
  std::vector<int64_t> src_strides, off_strides;
  for (int64_t d = 0; d < info.first; ++d) src_strides.push_back(info.src.stride(d)), off_strides.push_back(0);
  for (int64_t j = 0; j < nb; ++j) src_strides.push_back(0), off_strides.push_back(off.stride(j));
  for (int64_t d = info.first + k; d < info.src.dim(); ++d)
    src_strides.push_back(info.src.stride(d)), off_strides.push_back(0);
  return {make_view(info.src, info.result_shape, src_strides, info.src.storage_offset()),
          make_view(off, info.result_shape, off_strides, off.storage_offset())};
}

// Offsets are checked already; on CUDA invalid ones are -1 (Note [Index errors]).
constexpr IndexAxis kOffsetAxis{std::numeric_limits<int64_t>::max(), 1, false};

}  // namespace

Tensor index(const Tensor& self, const std::vector<Tensor>& indices) {
  const char* op = "index";
  GR_CHECK(self.defined(), op, ": undefined tensor argument");
  AdvancedIndex info = make_info(self, indices, op);
  if (info.indices.empty()) return clone(self);
  if (info.indices.size() == 1) {
    Tensor out = index_select_wrapped(info.src, info.first, reshape(info.indices[0], {-1}), true, op);
    return view(out, info.result_shape);
  }
  Tensor out = empty(info.result_shape, self.options());
  if (out.numel() == 0) return out;
  Tensor off = index_offsets(info, self, op);
  auto [src, offsets] = restrided(info, off);
  StridedLoop L = make_strided_loop({out, src, offsets}, info.result_shape);
  index_gather_stub(self.device(), L, self.scalar_type(), kInt64, kOffsetAxis);
  return out;
}

void index_put_(const Tensor& self, const std::vector<Tensor>& indices, const Tensor& values, bool accumulate) {
  const char* op = "index_put_";
  GR_CHECK(self.defined() && values.defined(), op, ": undefined tensor argument");
  GR_CHECK(values.scalar_type() == self.scalar_type(), op, ": requires the source and destination dtypes match, got ",
           self.scalar_type(), " for the destination and ", values.scalar_type(), " for the source");
  Tensor v = values.device() == self.device() ? values : to_device(values, self.device());
  if (v.storage().is_same(self.storage())) v = clone(v);
  AdvancedIndex info = make_info(self, indices, op);
  if (info.indices.empty()) {
    copy_(self, v);
    return;
  }
  bool fits = v.dim() <= static_cast<int64_t>(info.result_shape.size());
  for (int64_t i = 1; fits && i <= v.dim(); ++i) {
    const int64_t have = v.size(-i), want = info.result_shape[info.result_shape.size() - i];
    fits = have == want || have == 1;
  }
  GR_CHECK(fits, op, ": shape mismatch: value tensor of shape ", v.sizes(),
           " cannot be broadcast to indexing result of shape ", IntArrayRef(info.result_shape));
  v = expand(v, info.result_shape);
  const ScatterReduce reduce = accumulate ? ScatterReduce::Add : ScatterReduce::None;
  if (info.indices.size() == 1) {
    const Tensor flat = reshape(info.indices[0], {-1});
    std::vector<int64_t> sizes = info.src.sizes().vec();
    sizes[info.first] = flat.numel();
    scatter_along_dim_(info.src, info.first, flat, reshape(v, sizes), reduce, 1, true, op);
    return;
  }
  int64_t numel = 1;
  for (int64_t s : info.result_shape) numel *= s;
  if (numel == 0) return;
  Tensor off = index_offsets(info, self, op);
  auto [dst, offsets] = restrided(info, off);
  ScatterLoop S;
  S.rest = make_strided_loop({dst, v, offsets}, info.result_shape);
  // Any two positions may meet: accumulating needs one thread in order, and so does a store
  // whose last write must be the same each run (Note [Deterministic scatter]).
  S.serial = accumulate || are_deterministic_algorithms_enabled();
  self.unsafe_impl()->storage.bump_version();
  index_scatter_stub(self.device(), S, self.scalar_type(), kInt64, kOffsetAxis, reduce, 1);
}

}  // namespace gr::native
