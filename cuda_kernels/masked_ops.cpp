// CUDA masked_select and masked_scatter, composed of nonzero and the advanced-indexing kernels
// (the CPU's one-pass compactions, Note [Compaction without branches], are serial).
#include "core/factory.h"
#include "core/native/index/index_ops.h"
#include "core/native/shape/shape.h"

namespace gr::cuda {
namespace {

Tensor masked_select_cuda(const Tensor& self, const Tensor& mask) { return native::index(self, {mask}); }

int64_t masked_scatter_cuda(const Tensor& self, const Tensor& mask, const Tensor& source) {
  Tensor nz = native::nonzero(mask);
  const int64_t count = nz.size(0);
  if (count > source.numel()) return count;
  std::vector<Tensor> columns;
  for (int64_t j = 0; j < nz.size(1); ++j) columns.push_back(native::select(nz, 1, j));
  native::index_put_(self, columns, native::narrow(native::reshape(source, {-1}), 0, 0, count), false);
  return count;
}

}  // namespace

GR_REGISTER_KERNEL(native::masked_select_stub, kCUDA, &masked_select_cuda);
GR_REGISTER_KERNEL(native::masked_scatter_stub, kCUDA, &masked_scatter_cuda);

}  // namespace gr::cuda
