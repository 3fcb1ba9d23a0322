// index_select, index_add, index_copy and index_fill (and in place) along one dim, with
// backward. index_select and index_add are each other's adjoint, so the backwards (written
// with them) are differentiable again.
#include "autograd/function.h"
#include "autograd/ops.h"
#include "core/factory.h"
#include "core/native/copy/copy.h"
#include "core/native/index/index_ops.h"

namespace gr {

using autograd::record;
using autograd::SavedTensor;

namespace {

enum class AlongDim { Add, Copy };

// The backward of self (op)= source along dim, out of place or in place (out is self).
void record_along_dim(const char* name, const Tensor& self, const Tensor& source, const Tensor& out, int64_t dim,
                      const Tensor& index, AlongDim kind, const Scalar& alpha) {
  if (!autograd::needs_grad(self, source)) return;
  record(name, {self, source}, {out},
         [dim, ix = SavedTensor(index), kind, alpha, shape = source.sizes().vec()](const TensorList& g,
                                                                                  const std::vector<bool>& needs) {
           const Tensor& index = ix.unpack();
           Tensor gs;
           if (needs[1]) {
             gs = g[0].index_select(dim, index).reshape(shape);
             if (kind == AlongDim::Add && !(alpha.is_integral() && alpha.to_int64() == 1)) gs = gs * alpha;
           }
           return TensorList{needs[0] ? (kind == AlongDim::Add ? g[0] : g[0].index_fill(dim, index, 0)) : Tensor(), gs};
         });
}

Tensor along_dim(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, AlongDim kind,
                 const Scalar& alpha) {
  Tensor out = native::clone(self);
  if (kind == AlongDim::Add) native::index_add_(out, dim, index, source, alpha);
  else native::index_copy_(out, dim, index, source);
  record_along_dim(kind == AlongDim::Add ? "IndexAddBackward0" : "IndexCopyBackward0", self, source, out, dim, index, kind,
                   alpha);
  return out;
}

Tensor& along_dim_(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, AlongDim kind,
                   const Scalar& alpha) {
  autograd::check_inplace(self, kind == AlongDim::Add ? "index_add_" : "index_copy_");
  if (kind == AlongDim::Add) native::index_add_(self, dim, index, source, alpha);
  else native::index_copy_(self, dim, index, source);
  record_along_dim(kind == AlongDim::Add ? "IndexAddBackward0" : "IndexCopyBackward0", self, source, self, dim, index,
                   kind, alpha);
  return const_cast<Tensor&>(self);
}

// index_fill with a 0-d value tensor: the value's gradient sums the filled positions once each,
// however often the index names them.
// `node`: index_fill.int_Scalar is IndexFillBackward0, index_fill.int_Tensor IndexFillBackward1.
void record_fill(const char* node, const Tensor& self, const Tensor& value, const Tensor& out, int64_t dim,
                 const Tensor& index) {
  if (!autograd::needs_grad(self, value)) return;
  record(node, {self, value}, {out},
         [dim, ix = SavedTensor(index)](const TensorList& g, const std::vector<bool>& needs) {
           Tensor kept = g[0].index_fill(dim, ix.unpack(), 0);
           return TensorList{needs[0] ? kept : Tensor(), needs[1] ? (g[0] - kept).sum() : Tensor()};
         });
}

Tensor fill_value(const Tensor& self, const Scalar& value) { return full({}, value, self.options()); }

Tensor index_filled(const char* node, const Tensor& self, int64_t dim, const Tensor& index, const Tensor& value) {
  Tensor out = native::clone(self);
  native::index_fill_(out, dim, index, value);
  record_fill(node, self, value, out, dim, index);
  return out;
}
Tensor& index_filled_(const char* node, const Tensor& self, int64_t dim, const Tensor& index, const Tensor& value) {
  autograd::check_inplace(self, "index_fill_");
  native::index_fill_(self, dim, index, value);
  record_fill(node, self, value, self, dim, index);
  return const_cast<Tensor&>(self);
}

}  // namespace

Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index) {
  Tensor out = native::index_select(self, dim, index);
  if (autograd::needs_grad(self))
    record("IndexSelectBackward0", {self}, {out},
           [sizes = self.sizes().vec(), dim, ix = SavedTensor(index)](const TensorList& g, const std::vector<bool>&) {
             const Tensor& index = ix.unpack();
             std::vector<int64_t> source = sizes;
             if (!source.empty()) source[wrap_dim(dim, static_cast<int64_t>(source.size()))] = index.numel();
             return TensorList{index_add(zeros(sizes, g[0].options()), dim, index, g[0].reshape(source))};
           });
  return out;
}

Tensor index_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha) {
  return along_dim(self, dim, index, source, AlongDim::Add, alpha);
}
Tensor index_copy(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source) {
  return along_dim(self, dim, index, source, AlongDim::Copy, 1);
}
Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& value) {
  return index_filled("IndexFillBackward1", self, dim, index, value);
}
Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
  return index_filled("IndexFillBackward0", self, dim, index, fill_value(self, value));
}

Tensor& Tensor::index_add_(int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha) const {
  return along_dim_(*this, dim, index, source, AlongDim::Add, alpha);
}
Tensor& Tensor::index_copy_(int64_t dim, const Tensor& index, const Tensor& source) const {
  return along_dim_(*this, dim, index, source, AlongDim::Copy, 1);
}
Tensor& Tensor::index_fill_(int64_t dim, const Tensor& index, const Tensor& value) const {
  return index_filled_("IndexFillBackward1", *this, dim, index, value);
}
Tensor& Tensor::index_fill_(int64_t dim, const Tensor& index, const Scalar& value) const {
  return index_filled_("IndexFillBackward0", *this, dim, index, fill_value(*this, value));
}

}  // namespace gr
