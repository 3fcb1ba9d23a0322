// dot, mv, outer (ger) and tensordot. dot and mv run one GEMM call and have their own
// backward; outer and tensordot are built from differentiable views, mul and mm.
#include <algorithm>

#include "autograd/function.h"
#include "autograd/ops.h"
#include "core/native/gemm/gemm.h"

namespace gr {

using autograd::record;
using autograd::SavedTensor;

Tensor dot(const Tensor& a, const Tensor& b) {
  GR_CHECK(a.defined() && b.defined(), "dot: undefined tensor argument");
  GR_CHECK(a.dim() == 1 && b.dim() == 1, "dot: 1D tensors expected, but got ", a.dim(), "D and ", b.dim(),
           "D tensors (", a.sizes(), " and ", b.sizes(), ")");
  GR_CHECK(a.scalar_type() == b.scalar_type(), "dot: expected both vectors to have same dtype, but found ",
           a.scalar_type(), " and ", b.scalar_type());
  GR_CHECK(a.size(0) == b.size(0), "dot: inconsistent tensor size, expected tensor [", a.size(0), "] and src [",
           b.size(0), "] to have the same number of elements, but got ", a.size(0), " and ", b.size(0),
           " elements respectively");
  Tensor out = native::matmul(a, b);
  if (autograd::needs_grad(a, b)) {
    SavedTensor sa(b.requires_grad() ? a : Tensor()), sb(a.requires_grad() ? b : Tensor());
    record("DotBackward0", {a, b}, {out}, [sa, sb](const TensorList& g, const std::vector<bool>& needs) {
      return TensorList{needs[0] ? g[0] * sb.unpack() : Tensor(), needs[1] ? g[0] * sa.unpack() : Tensor()};
    });
  }
  return out;
}

Tensor mv(const Tensor& mat, const Tensor& vec) {
  GR_CHECK(mat.defined() && vec.defined(), "mv: undefined tensor argument");
  GR_CHECK(mat.dim() == 2 && vec.dim() == 1, "mv: vector + matrix @ vector expected, got mat ", mat.sizes(),
           " and vec ", vec.sizes());
  GR_CHECK(mat.size(1) == vec.size(0), "mv: size mismatch, got mat (", mat.size(0), "x", mat.size(1), "), vec (",
           vec.size(0), ")");
  Tensor out = native::matmul(mat, vec);
  if (autograd::needs_grad(mat, vec)) {
    SavedTensor sm(vec.requires_grad() ? mat : Tensor()), sv(mat.requires_grad() ? vec : Tensor());
    record("MvBackward0", {mat, vec}, {out}, [sm, sv](const TensorList& g, const std::vector<bool>& needs) {
      return TensorList{needs[0] ? outer(g[0], sv.unpack()) : Tensor(),
                        needs[1] ? matmul(sm.unpack().t(), g[0]) : Tensor()};
    });
  }
  return out;
}

Tensor outer(const Tensor& a, const Tensor& b) {
  GR_CHECK(a.defined() && b.defined(), "outer: undefined tensor argument");
  GR_CHECK(a.dim() == 1 && b.dim() == 1, "outer: Expected 1-D arguments, but got ", a.sizes(), " and ", b.sizes());
  return a.unsqueeze(1) * b.unsqueeze(0);
}
Tensor ger(const Tensor& a, const Tensor& b) { return outer(a, b); }

Tensor tensordot(const Tensor& a, const Tensor& b, IntArrayRef dims_a, IntArrayRef dims_b) {
  GR_CHECK(a.defined() && b.defined(), "tensordot: undefined tensor argument");
  GR_CHECK(dims_a.size() == dims_b.size(), "tensordot: both dimension lists should have same length, got ", dims_a,
           " and ", dims_b);
  std::vector<bool> contracted_a(static_cast<size_t>(a.dim())), contracted_b(static_cast<size_t>(b.dim()));
  std::vector<int64_t> perm_a, perm_b, out_shape;
  int64_t size = 1;
  for (size_t i = 0; i < dims_a.size(); ++i) {
    const int64_t da = wrap_dim(dims_a[i], a.dim(), "tensordot"), db = wrap_dim(dims_b[i], b.dim(), "tensordot");
    GR_CHECK(!contracted_a[da] && !contracted_b[db], "tensordot: a dim appears twice in ", dims_a, " or ", dims_b);
    GR_CHECK(a.size(da) == b.size(db), "tensordot: contracted dimensions need to match, but first has size ",
             a.size(da), " in dim ", da, " and second has size ", b.size(db), " in dim ", db, " (shapes ", a.sizes(),
             " and ", b.sizes(), ")");
    contracted_a[da] = contracted_b[db] = true;
    size *= a.size(da);
  }
  // a as [kept_a, contracted] and b as [contracted, kept_b], contracted dims in the lists' order.
  int64_t rows = 1, cols = 1;
  for (int64_t d = 0; d < a.dim(); ++d)
    if (!contracted_a[d]) perm_a.push_back(d), out_shape.push_back(a.size(d)), rows *= a.size(d);
  for (int64_t d : dims_a) perm_a.push_back(wrap_dim(d, a.dim()));
  for (int64_t d : dims_b) perm_b.push_back(wrap_dim(d, b.dim()));
  for (int64_t d = 0; d < b.dim(); ++d)
    if (!contracted_b[d]) perm_b.push_back(d), out_shape.push_back(b.size(d)), cols *= b.size(d);
  Tensor prod = mm(a.permute(perm_a).reshape({rows, size}), b.permute(perm_b).reshape({size, cols}));
  return prod.reshape(out_shape);
}

Tensor tensordot(const Tensor& a, const Tensor& b, int64_t dims) {
  GR_CHECK(a.defined() && b.defined(), "tensordot: undefined tensor argument");
  GR_CHECK(dims >= 0 && dims <= std::min(a.dim(), b.dim()), "tensordot: dims must be between 0 and ",
           std::min(a.dim(), b.dim()), " for shapes ", a.sizes(), " and ", b.sizes(), ", got ", dims);
  std::vector<int64_t> da, db;
  for (int64_t i = 0; i < dims; ++i) da.push_back(a.dim() - dims + i), db.push_back(i);
  return tensordot(a, b, da, db);
}


}  // namespace gr
