// index and index_put (out of place and in place) with lists of optional index tensors, as
// libtorch's at::index and at::index_put_ (NumPy's rules: Note [Advanced indexing]). They are
// each other's adjoint: index's backward puts the gradient, with accumulation, into zeros, and
// index_put's value gradient indexes it, so both are differentiable again.
#include "autograd/function.h"
#include "autograd/ops.h"
#include "core/factory.h"
#include "core/native/copy/copy.h"
#include "core/native/index/index_ops.h"

namespace gr {

using autograd::record;
using IndexList = std::vector<std::optional<Tensor>>;

namespace {

std::vector<Tensor> unwrap(const IndexList& indices) {
  std::vector<Tensor> out;
  for (const auto& i : indices) out.push_back(i ? *i : Tensor());
  return out;
}

// The gradients of `out = self with values put at indices`: self's is the incoming one with
// the written positions zeroed (unless accumulating), the values' the incoming one there.
void record_put(const Tensor& self, const IndexList& indices, const Tensor& values, bool accumulate,
                const Tensor& out) {
  if (!autograd::needs_grad(self, values)) return;
  record("IndexPutBackward0", {self, values}, {out},
         [indices, accumulate, shape = values.sizes().vec()](const TensorList& g, const std::vector<bool>& needs) {
           Tensor gself, gvalues;
           if (needs[0])
             gself = accumulate ? g[0] : index_put(g[0], indices, zeros({}, g[0].options()), false);
           if (needs[1]) gvalues = autograd::sum_to(index(g[0], indices), shape);
           return TensorList{gself, gvalues};
         });
}

}  // namespace

Tensor index(const Tensor& self, const IndexList& indices) {
  Tensor out = native::index(self, unwrap(indices));
  if (autograd::needs_grad(self))
    record("IndexBackward0", {self}, {out},
           [indices, sizes = self.sizes().vec()](const TensorList& g, const std::vector<bool>&) {
             return TensorList{index_put(zeros(sizes, g[0].options()), indices, g[0], true)};
           });
  return out;
}

Tensor index_put(const Tensor& self, const IndexList& indices, const Tensor& values, bool accumulate) {
  Tensor out = native::clone(self);
  native::index_put_(out, unwrap(indices), values, accumulate);
  record_put(self, indices, values, accumulate, out);
  return out;
}

Tensor& Tensor::index_put_(const IndexList& indices, const Tensor& values, bool accumulate) const {
  autograd::check_inplace(*this, "index_put_");
  native::index_put_(*this, unwrap(indices), values, accumulate);
  record_put(*this, indices, values, accumulate, *this);
  return const_cast<Tensor&>(*this);
}

}  // namespace gr
