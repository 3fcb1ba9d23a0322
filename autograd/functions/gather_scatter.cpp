// gather, scatter (a src tensor or a value, with an optional "add"/"multiply" reduce),
// scatter_add, their in-place forms, and one_hot. gather and scatter_add are each other's
// adjoint (gather's backward is scatter_add into zeros, scatter_add's src backward a gather),
// so every backward here is differentiable again.
#include "autograd/function.h"
#include "autograd/ops.h"
#include "core/factory.h"
#include "core/native/copy/copy.h"
#include "core/native/index/index_ops.h"
#include "core/native/reduce/reduce.h"

namespace gr {

using autograd::record;
using autograd::SavedTensor;

namespace {

native::ScatterReduce reduce_of(std::string_view reduce) {
  if (reduce == "add") return native::ScatterReduce::Add;
  GR_CHECK(reduce == "multiply", "scatter: reduce argument must be either \"add\" or \"multiply\", got \"", reduce, "\"");
  return native::ScatterReduce::Multiply;
}

// A src larger than index gets its gradient in the leading region (torch 1.13 fails there).
Tensor src_gradient(const Tensor& gathered, const std::vector<int64_t>& src_shape) {
  if (gathered.sizes() == IntArrayRef(src_shape)) return gathered;
  std::vector<indexing::TensorIndex> region;
  for (int64_t d = 0; d < gathered.dim(); ++d) region.emplace_back(indexing::Slice(0, gathered.size(d)));
  Tensor full = zeros(src_shape, gathered.options());
  full.index_put_(region, gathered);
  return full;
}

// Records the backward of a scatter into `out` (out of place or in place on self). Overwritten
// positions pass no gradient to self; src receives the gradient at the positions it wrote.
void record_scatter(const char* name, const Tensor& self, const Tensor& src, const Tensor& out, int64_t dim,
                    const Tensor& index, native::ScatterReduce reduce) {
  const bool has_src = src.defined();
  if (!(has_src ? autograd::needs_grad(self, src) : autograd::needs_grad(self))) return;
  GR_CHECK(reduce != native::ScatterReduce::Multiply, "scatter: the derivative of reduce=\"multiply\" is not implemented");
  TensorList inputs{self};
  if (has_src) inputs.push_back(src);
  record(name, inputs, {out},
         [dim, ix = SavedTensor(index), add = reduce == native::ScatterReduce::Add,
          src_shape = has_src ? src.sizes().vec() : std::vector<int64_t>()](const TensorList& g,
                                                                            const std::vector<bool>& needs) {
           const Tensor& index = ix.unpack();
           TensorList grads{needs[0] ? (add ? g[0] : g[0].scatter(dim, index, 0)) : Tensor()};
           if (needs.size() > 1) grads.push_back(needs[1] ? src_gradient(g[0].gather(dim, index), src_shape) : Tensor());
           return grads;
         });
}

Tensor scatter_out(const char* name, const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                   native::ScatterReduce reduce) {
  Tensor out = native::scatter_copy(self, dim, index, src, reduce, name);
  record_scatter(reduce == native::ScatterReduce::Add ? "ScatterAddBackward0" : "ScatterBackward0", self, src, out, dim,
                 index, reduce);
  return out;
}

Tensor scatter_value_out(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value,
                         native::ScatterReduce reduce) {
  Tensor out = native::scatter_value_copy(self, dim, index, value, reduce, "scatter");
  record_scatter("ScatterBackward1", self, {}, out, dim, index, reduce);  // scatter.value
  return out;
}

Tensor& scatter_in_place(const char* name, const Tensor& self, int64_t dim, const Tensor& index,
                         const Tensor& src, native::ScatterReduce reduce) {
  autograd::check_inplace(self, name);
  native::scatter_(self, dim, index, src, reduce, name);
  record_scatter(reduce == native::ScatterReduce::Add ? "ScatterAddBackward0" : "ScatterBackward0", self, src, self, dim,
                 index, reduce);
  return const_cast<Tensor&>(self);
}

Tensor& scatter_value_in_place(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value,
                               native::ScatterReduce reduce) {
  autograd::check_inplace(self, "scatter_");
  native::scatter_value_(self, dim, index, value, reduce, "scatter_");
  record_scatter("ScatterBackward1", self, {}, self, dim, index, reduce);
  return const_cast<Tensor&>(self);
}

}  // namespace

Tensor gather(const Tensor& self, int64_t dim, const Tensor& index, bool sparse_grad) {
  GR_CHECK(!sparse_grad, "gather: sparse_grad=true is not supported (gradients are dense)");
  Tensor out = native::gather(self, dim, index);
  if (autograd::needs_grad(self))
    record("GatherBackward0", {self}, {out},
           [sizes = self.sizes().vec(), dim, ix = SavedTensor(index)](const TensorList& g, const std::vector<bool>&) {
             return TensorList{scatter_add(zeros(sizes, g[0].options()), dim, ix.unpack(), g[0])};
           });
  return out;
}

Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  return scatter_out("scatter", self, dim, index, src, native::ScatterReduce::None);
}
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
  return scatter_value_out(self, dim, index, value, native::ScatterReduce::None);
}
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce) {
  return scatter_out("scatter", self, dim, index, src, reduce_of(reduce));
}
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value, std::string_view reduce) {
  return scatter_value_out(self, dim, index, value, reduce_of(reduce));
}
Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  return scatter_out("scatter_add", self, dim, index, src, native::ScatterReduce::Add);
}

Tensor& Tensor::scatter_(int64_t dim, const Tensor& index, const Tensor& src) const {
  return scatter_in_place("scatter_", *this, dim, index, src, native::ScatterReduce::None);
}
Tensor& Tensor::scatter_(int64_t dim, const Tensor& index, const Scalar& value) const {
  return scatter_value_in_place(*this, dim, index, value, native::ScatterReduce::None);
}
Tensor& Tensor::scatter_(int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce) const {
  return scatter_in_place("scatter_", *this, dim, index, src, reduce_of(reduce));
}
Tensor& Tensor::scatter_(int64_t dim, const Tensor& index, const Scalar& value, std::string_view reduce) const {
  return scatter_value_in_place(*this, dim, index, value, reduce_of(reduce));
}
Tensor& Tensor::scatter_add_(int64_t dim, const Tensor& index, const Tensor& src) const {
  return scatter_in_place("scatter_add_", *this, dim, index, src, native::ScatterReduce::Add);
}

Tensor one_hot(const Tensor& self, int64_t num_classes) {
  GR_CHECK(self.scalar_type() == kInt64, "one_hot: is only applicable to index tensor of type int64, got ",
           self.scalar_type());
  std::vector<int64_t> shape = self.sizes().vec();
  if (self.numel() == 0) {
    GR_CHECK(num_classes >= 0, "one_hot: can not infer total number of classes from empty tensor of shape ",
             self.sizes());
    shape.push_back(num_classes);
    return empty(shape, self.options());
  }
  const int64_t lo = native::min(self).item<int64_t>(), hi = native::max(self).item<int64_t>();
  GR_CHECK(lo >= 0, "one_hot: class values must be non-negative, got ", lo);
  if (num_classes == -1) num_classes = hi + 1;
  GR_CHECK(hi < num_classes, "one_hot: class values must be smaller than num_classes (", num_classes, "), got ", hi);
  shape.push_back(num_classes);
  Tensor out = zeros(shape, self.options());
  native::scatter_value_(out, -1, native::contiguous(self).unsqueeze(-1), 1, native::ScatterReduce::None, "one_hot");
  return out;
}

}  // namespace gr
