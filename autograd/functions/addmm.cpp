// addmm, baddbmm and addbmm (beta * self + alpha * products) with backward: one GEMM call
// that scales self by beta in place of a separate add (core/native/gemm/gemm.h's baddbmm).
#include "autograd/autocast.h"
#include "autograd/function.h"
#include "autograd/ops.h"
#include "core/native/gemm/gemm.h"
#include "core/native/shape/shape.h"
#include "core/native/elementwise/strided_loop.h"

namespace gr {

using autograd::record;
using autograd::SavedTensor;

namespace {

Tensor mT(const Tensor& t) { return t.transpose(-1, -2); }

// batch1 [B, M, K] and batch2 [B, K, N], as baddbmm and addbmm need them.
void check_batches(const char* op, const Tensor& batch1, const Tensor& batch2) {
  GR_CHECK(batch1.defined() && batch2.defined(), op, ": undefined tensor argument");
  GR_CHECK(batch1.dim() == 3 && batch2.dim() == 3, op, ": batch1 and batch2 must be 3-D tensors, got ",
           batch1.sizes(), " and ", batch2.sizes());
  GR_CHECK(batch1.size(0) == batch2.size(0) && batch1.size(2) == batch2.size(1), op,
           ": Expected size for first two dimensions of batch2 tensor to be: [", batch1.size(0), ", ",
           batch1.size(2), "] but got: [", batch2.size(0), ", ", batch2.size(1), "] (batch1 ", batch1.sizes(),
           ", batch2 ", batch2.sizes(), ")");
}

// beta * self + alpha * bmm(b1, b2) for 3-D operands; `unbatched` drops the size-1 batch
// (addmm). The backward is written with differentiable ops.
Tensor baddbmm_impl(const char* op, const Tensor& self, const Tensor& b1, const Tensor& b2, double beta, double alpha,
                    bool unbatched) {
  GR_CHECK(self.defined(), op, ": undefined tensor argument");
  std::vector<int64_t> shape{b1.size(0), b1.size(1), b2.size(2)};
  if (unbatched) shape.erase(shape.begin());
  // self must broadcast to the result (addmm's has no batch dim).
  GR_CHECK(IntArrayRef(native::broadcast_shapes(self.sizes(), shape, op)) == IntArrayRef(shape), op, ": self of shape ",
           self.sizes(), " does not broadcast to the product's shape ", IntArrayRef(shape));
  Tensor out = native::baddbmm(self, b1, b2, beta, alpha, op);
  if (unbatched) out = native::squeeze(out, 0);
  if (autograd::needs_grad(self, b1, b2)) {
    SavedTensor s1(b2.requires_grad() ? b1 : Tensor()), s2(b1.requires_grad() ? b2 : Tensor());
    record(unbatched ? "AddmmBackward0" : "BaddbmmBackward0", {self, b1, b2}, {out},
           [s1, s2, beta, alpha, unbatched, self_shape = self.sizes().vec()](const TensorList& g,
                                                                              const std::vector<bool>& needs) {
             Tensor g3 = unbatched ? g[0].unsqueeze(0) : g[0];
             // Scaling by 1 (the usual beta and alpha) would cost a pass over each gradient.
             auto scaled = [](const Tensor& t, double factor) { return factor == 1.0 ? t : t * factor; };
             Tensor gs = needs[0] ? autograd::sum_to(scaled(g[0], beta), self_shape) : Tensor();
             Tensor g1 = needs[1] ? scaled(bmm(g3, mT(s2.unpack())), alpha) : Tensor();
             Tensor g2 = needs[2] ? scaled(bmm(mT(s1.unpack()), g3), alpha) : Tensor();
             return TensorList{gs, g1, g2};
           });
  }
  return out;
}

}  // namespace

Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta, const Scalar& alpha) {
  GR_AUTOCAST(addmm, self, mat1, mat2, beta, alpha);
  GR_CHECK(mat1.defined() && mat2.defined(), "addmm: undefined tensor argument");
  GR_CHECK(mat1.dim() == 2 && mat2.dim() == 2, "addmm: mat1 and mat2 must be matrices, got ", mat1.dim(), "-D and ",
           mat2.dim(), "-D tensors (", mat1.sizes(), " and ", mat2.sizes(), ")");
  GR_CHECK(mat1.size(1) == mat2.size(0), "addmm: mat1 and mat2 shapes cannot be multiplied (", mat1.size(0), "x",
           mat1.size(1), " and ", mat2.size(0), "x", mat2.size(1), ")");
  return baddbmm_impl("addmm", self, mat1.unsqueeze(0), mat2.unsqueeze(0), beta.to_double(), alpha.to_double(), true);
}

Tensor baddbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta,
               const Scalar& alpha) {
  GR_AUTOCAST(baddbmm, self, batch1, batch2, beta, alpha);
  check_batches("baddbmm", batch1, batch2);
  return baddbmm_impl("baddbmm", self, batch1, batch2, beta.to_double(), alpha.to_double(), false);
}

Tensor addbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta, const Scalar& alpha) {
  GR_AUTOCAST(addbmm, self, batch1, batch2, beta, alpha);
  check_batches("addbmm", batch1, batch2);
  // sum_b batch1[b] @ batch2[b] is one product of [M, B*K] and [B*K, N].
  const int64_t B = batch1.size(0), M = batch1.size(1), K = batch1.size(2), N = batch2.size(2);
  return addmm(self, batch1.permute({1, 0, 2}).reshape({M, B * K}), batch2.reshape({B * K, N}), beta, alpha);
}


}  // namespace gr
