// matmul, mm, bmm and linear with backward. Transposed operands are strided views, which
// the GEMM reads directly (no copies).
#include <vector>

#include "autograd/autocast.h"
#include "autograd/function.h"
#include "autograd/ops.h"
#include "core/native/elementwise/elementwise.h"
#include "core/native/gemm/gemm.h"
#include "core/native/shape/shape.h"

namespace gr {

using autograd::record;
using autograd::SavedTensor;

namespace {

Tensor mT(const Tensor& t) { return native::transpose(t, -1, -2); }

// A [..., M, K] @ B [..., K, N] for operands with at least 2 dims; batch dims broadcast.
Tensor matmul_nd(const char* name, const Tensor& a, const Tensor& b, Tensor (*forward)(const Tensor&, const Tensor&)) {
  Tensor out = forward(a, b);
  if (autograd::needs_grad(a, b)) {
    SavedTensor sa(b.requires_grad() ? a : Tensor()), sb(a.requires_grad() ? b : Tensor());
    record(name, {a, b}, {out},
           [sa, sb, shape_a = a.sizes().vec(), shape_b = b.sizes().vec()](const TensorList& g,
                                                                          const std::vector<bool>& needs) {
             Tensor ga = needs[0] ? autograd::sum_to(gr::matmul(g[0], sb.unpack().transpose(-1, -2)), shape_a) : Tensor();
             Tensor gb = needs[1] ? autograd::sum_to(gr::matmul(sa.unpack().transpose(-1, -2), g[0]), shape_b) : Tensor();
             return TensorList{ga, gb};
           });
  }
  return out;
}

}  // namespace

Tensor mm(const Tensor& a, const Tensor& b) {
  GR_AUTOCAST(mm, a, b);
  return matmul_nd("MmBackward0", a, b, native::mm);
}
Tensor bmm(const Tensor& a, const Tensor& b) {
  GR_AUTOCAST(bmm, a, b);
  return matmul_nd("BmmBackward0", a, b, native::bmm);
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  GR_AUTOCAST(matmul, a, b);
  GR_CHECK(a.defined() && b.defined() && a.dim() >= 1 && b.dim() >= 1,
           "matmul: both arguments need at least 1 dimension");
  // Two matrices are mm (MmBackward0, as PyTorch records); other shapes keep gradring's one fused node,
  // where PyTorch records the views around its bmm/mv (UnsafeViewBackward0, ...).
  if (a.dim() == 2 && b.dim() == 2) return matmul_nd("MmBackward0", a, b, native::matmul);
  if (a.dim() >= 2 && b.dim() >= 2) return matmul_nd("MatmulBackward", a, b, native::matmul);
  // Vectors become a row (left) or a column (right) and are squeezed out again.
  Tensor A = a.dim() == 1 ? a.unsqueeze(0) : a;
  Tensor B = b.dim() == 1 ? b.unsqueeze(-1) : b;
  Tensor out = matmul_nd("MatmulBackward", A, B, native::matmul);
  if (b.dim() == 1) out = out.squeeze(-1);
  if (a.dim() == 1) out = out.squeeze(b.dim() == 1 ? -1 : -2);
  return out;
}

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  GR_AUTOCAST(linear, x, weight, bias);
  GR_CHECK(weight.dim() == 2, "linear: weight must be 2-D [out_features, in_features], got ", weight.sizes());
  GR_CHECK(x.dim() >= 1 && x.size(-1) == weight.size(1), "linear: input's last dimension (",
           x.dim() ? x.size(-1) : 0, ") must equal in_features (", weight.size(1), "); input ", x.sizes(),
           ", weight ", weight.sizes());
  GR_CHECK(!bias.defined() || (bias.dim() == 1 && bias.size(0) == weight.size(0)), "linear: bias must be [",
           weight.size(0), "], got ", bias.sizes());
  Tensor out;
  if (bias.defined() && x.dim() >= 2 && x.is_contiguous() && x.numel() > 0) {  // See Note [Bias in the GEMM epilogue]
    std::vector<int64_t> shape(x.sizes().begin(), x.sizes().end());
    shape.back() = weight.size(0);
    out = native::view(native::mm_bias(native::view(x, {x.numel() / x.size(-1), x.size(-1)}), mT(weight), bias),
                       shape);
  } else {
    out = native::matmul(x, mT(weight));
    if (bias.defined()) native::add_(out, bias);
  }
  if (autograd::needs_grad(x, weight, bias)) {
    SavedTensor sx(weight.requires_grad() ? x : Tensor()), sw(weight);
    record("LinearBackward", {x, weight, bias}, {out},
           [sx, sw, in_features = weight.size(1)](const TensorList& g, const std::vector<bool>& needs) {
             const Tensor& gy = g[0];
             const int64_t out_features = gy.size(-1);
             Tensor gx = needs[0] ? gr::matmul(gy, sw.unpack()) : Tensor();
             Tensor gw, gb;
             // Batch dims fold into rows: gw = gy2^T @ x2 with gy2 [rows, out], x2 [rows, in].
             Tensor gy2 = gy.reshape({-1, out_features});
             if (needs[1]) gw = gr::mm(gy2.t(), sx.unpack().reshape({-1, in_features}));
             if (needs.size() > 2 && needs[2]) gb = gr::sum(gy2, {0});
             return TensorList{gx, gw, gb};
           });
  }
  return out;
}

}  // namespace gr
