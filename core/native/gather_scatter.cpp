// gather, scatter, index_select, index_add, index_copy and index_fill: argument checks, and
// the restrided views that turn each into one gather or scatter pass (index_ops.h).
#include <string_view>

#include "core/factory.h"
#include "core/native/copy.h"
#include "core/native/index_ops.h"

namespace gr::native {

GR_DEFINE_DISPATCH(GatherFn, index_gather_stub);
GR_DEFINE_DISPATCH(ScatterFn, index_scatter_stub);

ScatterSchedule scatter_schedule(const ScatterLoop& loop, ScalarType t, ScatterReduce reduce, bool deterministic) {
  const bool exact_in_any_order = reduce != ScatterReduce::None && !is_floating_point(t);
  if (!deterministic || exact_in_any_order) return ScatterSchedule::kPerElement;
  return loop.serial ? ScatterSchedule::kSingleThread : ScatterSchedule::kPerRestPosition;
}

void check_index_tensor(const Tensor& self, const Tensor& index, const char* op) {
  GR_CHECK(self.defined() && index.defined(), op, ": undefined tensor argument");
  // torch's index_copy_ and index_fill_ take int64 indices only; the others int32 too.
  const std::string_view name(op);
  if (name == "index_copy_" || name == "index_fill_")
    GR_CHECK(index.scalar_type() == kInt64, op, ": expected an int64 index tensor, got ", index.scalar_type());
  else
    GR_CHECK(is_index_dtype(index.scalar_type()), op, ": expected an int64 or int32 index tensor, got ",
             index.scalar_type());
  GR_CHECK(index.device() == self.device(), op, ": expected self and index on the same device, got ", self.device(),
           " and ", index.device());
}

namespace {

// A 0-d tensor taken as 1-d of size 1, as torch's gather/scatter shape rules do.
Tensor at_least_1d(const Tensor& t) { return t.dim() == 0 ? make_view(t, {1}, {1}, t.storage_offset()) : t; }

// t's elements over `sizes` with t's strides, and stride 0 along `zero_dim` (-1: none).
Tensor restride(const Tensor& t, IntArrayRef sizes, int64_t zero_dim) {
  std::vector<int64_t> strides = t.strides().vec();
  if (zero_dim >= 0) strides[zero_dim] = 0;
  return make_view(t, sizes.vec(), strides, t.storage_offset());
}

// A 1-d index over `sizes`, stepping along `dim` only.
Tensor index_along(const Tensor& index, IntArrayRef sizes, int64_t dim) {
  std::vector<int64_t> strides(sizes.size(), 0);
  strides[dim] = index.dim() == 0 ? 0 : index.stride(0);
  return make_view(index, sizes.vec(), strides, index.storage_offset());
}

Tensor without_dim(const Tensor& t, int64_t dim) {
  std::vector<int64_t> sizes = t.sizes().vec(), strides = t.strides().vec();
  sizes.erase(sizes.begin() + dim);
  strides.erase(strides.begin() + dim);
  return make_view(t, sizes, strides, t.storage_offset());
}

// Runs a scatter over `sizes` (dims >= 1): dst is self restrided, src and index are views over sizes.
// An `init` (out of place) is copied into self first: by the kernel, line by line, where
// sizes covers all of self but dim (See Note [Scatter out of place]), else whole.
void run_scatter(const Tensor& self, int64_t dim, IntArrayRef sizes, const Tensor& src, const Tensor& index,
                 ScatterReduce reduce, const Scalar& alpha, bool wrap, const char* op, const Tensor& shown_index,
                 const Tensor& init = {}) {
  int64_t numel = 1;
  bool covers_self = true;
  for (int64_t k = 0; k < static_cast<int64_t>(sizes.size()); ++k) {
    numel *= sizes[k];
    covers_self = covers_self && (k == dim || sizes[k] == self.size(k));
  }
  const bool copy_lines = init.defined() && numel > 0 && covers_self && self.is_cpu();
  if (init.defined() && !copy_lines) copy_(self, init);
  if (numel == 0) return;
  Tensor dst = restride(self, sizes, dim);
  ScatterLoop S;
  std::vector<int64_t> rest = sizes.vec();
  rest.erase(rest.begin() + dim);
  if (copy_lines) {
    S.rest = make_strided_loop(
        {without_dim(dst, dim), without_dim(src, dim), without_dim(index, dim), without_dim(init, dim)}, rest);
    S.copy_self = true;
    S.self_step = init.stride(dim);
  } else {
    S.rest = make_strided_loop({without_dim(dst, dim), without_dim(src, dim), without_dim(index, dim)}, rest);
  }
  S.n = sizes[dim];
  S.step = {0, src.stride(dim), index.stride(dim)};
  const IndexAxis axis{self.size(dim), self.stride(dim), wrap};
  self.unsafe_impl()->storage.bump_version();
  with_index_errors(op, dim, self, shown_index,
                    [&] { index_scatter_stub(self.device(), S, self.scalar_type(), index.scalar_type(), axis, reduce, alpha); });
}

// The source of a scatter, read from a copy when it shares memory with the destination.
Tensor unaliased(const Tensor& src, const Tensor& self) { return src.storage().is_same(self.storage()) ? clone(src) : src; }

void check_same_dtype(const Tensor& self, const Tensor& src, const char* op, const char* what) {
  GR_CHECK(src.scalar_type() == self.scalar_type(), op, ": expected self and ", what, " to have the same dtype, but got ",
           self.scalar_type(), " and ", src.scalar_type());
  GR_CHECK(src.device() == self.device(), op, ": expected self and ", what, " on the same device, got ", self.device(),
           " and ", src.device());
}

void check_vector_index(const Tensor& index, const char* op) {
  GR_CHECK(index.dim() <= 1, op, ": index is supposed to be a vector, got a ", index.dim(), "-d index of shape ",
           index.sizes());
}

// init: see run_scatter.
void scatter_impl(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, bool is_value,
                  ScatterReduce reduce, const char* op, const Tensor& init = {}) {
  check_index_tensor(self, index, op);
  check_same_dtype(self, src, op, is_value ? "value" : "src");
  const Tensor s = at_least_1d(self), ix = at_least_1d(index);
  const int64_t d = wrap_dim(dim, s.dim(), op);
  GR_CHECK(ix.dim() == s.dim(), op, ": index tensor must have the same number of dimensions as self tensor (index ",
           index.sizes(), ", self ", self.sizes(), ")");
  Tensor sv = is_value ? make_view(src, ix.sizes().vec(), std::vector<int64_t>(ix.dim(), 0), src.storage_offset())
                       : at_least_1d(unaliased(src, self));
  GR_CHECK(is_value || sv.dim() == ix.dim(), op, ": index tensor must have the same number of dimensions as src tensor ",
           "(index ", index.sizes(), ", src ", src.sizes(), ")");
  for (int64_t k = 0; k < ix.dim(); ++k)
    GR_CHECK((k == d || ix.size(k) <= s.size(k)) && ix.size(k) <= sv.size(k), op, ": expected index ", index.sizes(),
             " to be smaller than self ", self.sizes(), " apart from dimension ", d, " and to be smaller than src ",
             is_value ? IntArrayRef(index.sizes()) : src.sizes());
  if (!is_value) sv = restride(sv, ix.sizes(), -1);
  run_scatter(s, d, ix.sizes(), sv, ix, reduce, 1, false, op, index, init.defined() ? at_least_1d(init) : init);
}

}  // namespace

Tensor gather(const Tensor& self, int64_t dim, const Tensor& index) {
  const char* op = "gather";
  check_index_tensor(self, index, op);
  const Tensor s = at_least_1d(self), ix = at_least_1d(index);
  const int64_t d = wrap_dim(dim, s.dim(), op);
  GR_CHECK(ix.dim() == s.dim(), op, ": index tensor must have the same number of dimensions as input tensor (index ",
           index.sizes(), ", self ", self.sizes(), ")");
  for (int64_t k = 0; k < s.dim(); ++k)
    GR_CHECK(k == d || ix.size(k) <= s.size(k), op, ": size does not match at dimension ", k, ": expected index ",
             index.sizes(), " to be smaller than self ", self.sizes(), " apart from dimension ", d);
  Tensor out = empty(index.sizes(), self.options());
  if (out.numel() == 0) return out;
  StridedLoop L = make_strided_loop({at_least_1d(out), restride(s, ix.sizes(), d), ix}, ix.sizes());
  const IndexAxis axis{s.size(d), s.stride(d), false};
  with_index_errors(op, d, self, index, [&] { index_gather_stub(self.device(), L, self.scalar_type(), index.scalar_type(), axis); });
  return out;
}

void scatter_(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, ScatterReduce reduce,
              const char* op) {
  scatter_impl(self, dim, index, src, false, reduce, op);
}

void scatter_value_(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value, ScatterReduce reduce,
                    const char* op) {
  scatter_impl(self, dim, index, full({}, value, self.options()), true, reduce, op);
}

Tensor scatter_copy(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, ScatterReduce reduce,
                    const char* op) {
  Tensor out = empty(self.sizes(), self.options());
  scatter_impl(out, dim, index, src, false, reduce, op, self);
  return out;
}

Tensor scatter_value_copy(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value,
                          ScatterReduce reduce, const char* op) {
  Tensor out = empty(self.sizes(), self.options());
  scatter_impl(out, dim, index, full({}, value, self.options()), true, reduce, op, self);
  return out;
}

Tensor index_select_wrapped(const Tensor& self, int64_t dim, const Tensor& index, bool wrap, const char* op) {
  check_index_tensor(self, index, op);
  check_vector_index(index, op);
  const Tensor s = at_least_1d(self);
  const int64_t d = wrap_dim(dim, s.dim(), op);
  std::vector<int64_t> sizes = s.sizes().vec();
  sizes[d] = index.numel();
  Tensor out = empty(self.dim() == 0 ? index.sizes().vec() : sizes, self.options());
  if (out.numel() == 0) return out;
  StridedLoop L = make_strided_loop({at_least_1d(out), restride(s, sizes, d), index_along(index, sizes, d)}, sizes);
  const IndexAxis axis{s.size(d), s.stride(d), wrap};
  with_index_errors(op, d, self, index, [&] { index_gather_stub(self.device(), L, self.scalar_type(), index.scalar_type(), axis); });
  return out;
}

Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index) {
  return index_select_wrapped(self, dim, index, false, "index_select");
}

void scatter_along_dim_(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                        ScatterReduce reduce, const Scalar& alpha, bool wrap, const char* op) {
  check_index_tensor(self, index, op);
  check_vector_index(index, op);
  check_same_dtype(self, source, op, "source");
  const Tensor s = at_least_1d(self), src = at_least_1d(unaliased(source, self));
  const int64_t d = wrap_dim(dim, s.dim(), op);
  GR_CHECK(src.dim() == s.dim(), op, ": source/destination tensors must have the same slice shapes (self ",
           self.sizes(), ", source ", source.sizes(), ")");
  for (int64_t k = 0; k < s.dim(); ++k)
    GR_CHECK(k == d || src.size(k) == s.size(k), op, ": source/destination tensors must have the same slice shapes (self ",
             self.sizes(), ", source ", source.sizes(), ", dim ", d, ")");
  GR_CHECK(index.numel() == src.size(d), op, ": number of indices (", index.numel(), ") should be equal to source.size(",
           d, ") (", src.size(d), ")");
  run_scatter(s, d, src.sizes(), src, index_along(index, src.sizes(), d), reduce, alpha, wrap, op, index);
}

void index_add_(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha) {
  scatter_along_dim_(self, dim, index, source, ScatterReduce::Add, alpha, false, "index_add_");
}

void index_copy_(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source) {
  scatter_along_dim_(self, dim, index, source, ScatterReduce::None, 1, false, "index_copy_");
}

void index_fill_(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& value) {
  const char* op = "index_fill_";
  check_index_tensor(self, index, op);
  check_vector_index(index, op);
  GR_CHECK(value.dim() == 0, op, ": only supports a 0-dimensional value tensor, but got one with ", value.dim(),
           " dimension(s)");
  Tensor v = to_device(to_dtype(value, self.scalar_type()), self.device());
  const Tensor s = at_least_1d(self);
  const int64_t d = wrap_dim(dim, s.dim(), op);
  std::vector<int64_t> sizes = s.sizes().vec();
  sizes[d] = index.numel();
  Tensor src = make_view(v, sizes, std::vector<int64_t>(sizes.size(), 0), v.storage_offset());
  run_scatter(s, d, sizes, src, index_along(index, sizes, d), ScatterReduce::None, 1, true, op, index);
}

}  // namespace gr::native
