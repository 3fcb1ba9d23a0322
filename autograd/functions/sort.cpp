// sort, argsort and topk with backward: the values' gradient goes back to the positions the
// indices name (a scatter into zeros, differentiable again); the indices have none.
#include "autograd/function.h"
#include "autograd/ops.h"
#include "core/factory.h"
#include "core/native/index/sort.h"

namespace gr {

using autograd::record;

namespace {
// Records the gradient of values taken from self at `indices` along dim.
void record_selection(const char* name, const Tensor& self, const Tensor& values, const Tensor& indices, int64_t dim) {
  if (!autograd::needs_grad(self)) return;
  record(name, {self}, {values},
         [sizes = self.sizes().vec(), dim = wrap_dim(dim, self.dim()), ix = indices](const TensorList& g,
                                                                                    const std::vector<bool>&) {
           return TensorList{scatter(zeros(sizes, g[0].options()), dim, ix, g[0])};
         });
}

// sort is SortBackward0, sort.stable SortBackward1.
std::tuple<Tensor, Tensor> sorted(const char* node, const Tensor& self, bool stable, int64_t dim, bool descending) {
  auto [values, indices] = native::sort(self, dim, descending, stable);
  record_selection(node, self, values, indices, dim);
  return {values, indices};
}
}  // namespace

std::tuple<Tensor, Tensor> sort(const Tensor& self, std::optional<bool> stable, int64_t dim, bool descending) {
  return sorted("SortBackward1", self, stable.value_or(false), dim, descending);
}
std::tuple<Tensor, Tensor> sort(const Tensor& self, int64_t dim, bool descending) {
  return sorted("SortBackward0", self, false, dim, descending);
}
Tensor argsort(const Tensor& self, int64_t dim, bool descending) {
  return native::sort(self, dim, descending, false).second;
}
Tensor argsort(const Tensor& self, bool stable, int64_t dim, bool descending) {
  return native::sort(self, dim, descending, stable).second;
}

std::tuple<Tensor, Tensor> topk(const Tensor& self, int64_t k, int64_t dim, bool largest, bool sorted) {
  auto [values, indices] = native::topk(self, k, dim, largest, sorted);
  record_selection("TopkBackward0", self, values, indices, dim);
  return {values, indices};
}


}  // namespace gr
