// Vector and matrix norms with backward: norm (torch.norm's overloads, and "fro"),
// frobenius_norm, linalg::vector_norm and linalg::matrix_norm (the norms without an SVD).
#include <cmath>
#include <string>

#include "autograd/function.h"
#include "autograd/functions/reduce_grad.h"
#include "autograd/ops.h"
#include "core/factory.h"
#include "core/native/copy.h"
#include "core/native/elementwise.h"
#include "core/native/reduce.h"

namespace gr {

using autograd::record;
using autograd::ReducedDims;
using autograd::SavedTensor;

namespace {

// d ||x||_p / dx, times the incoming gradient (kept dims), as torch's norm_backward.
Tensor norm_backward(const Tensor& g, const Tensor& x, const Tensor& norm, double p) {
  if (p == 0) return zeros_like(x);
  if (p == 1) return g * sign(x);
  const Tensor nonzero_norm = native::ne(norm, native::wrapped_scalar(norm, 0));
  if (p == 2) return x * where(nonzero_norm, g / norm, 0.0);
  if (std::isinf(p)) {  // shared evenly by the elements whose |x| is the norm
    Tensor hit = native::to_dtype(native::eq(native::abs(x), norm), x.scalar_type());
    std::vector<int64_t> dims;
    for (int64_t d = 0; d < x.dim(); ++d)
      if (norm.size(d) == 1 && x.size(d) != 1) dims.push_back(d);
    return g * sign(x) * (hit / native::sum(hit, dims, true));
  }
  Tensor nonzero_x = native::ne(x, native::wrapped_scalar(x, 0));
  Tensor scaled = where(nonzero_x, abs(x).pow(p - 1), 0.0) * sign(x);
  return scaled * where(nonzero_norm, g / norm.pow(p - 1), 0.0);
}

// `node` names the ATen overload: norm.Scalar NormBackward0, norm.ScalarOpt_dim 1,
// norm.ScalarOpt_dtype 2, norm.ScalarOpt_dim_dtype 3, linalg_vector_norm LinalgVectorNormBackward0.
Tensor vector_norm_impl(const Tensor& x, double p, IntArrayRef dims, bool keepdim, std::optional<ScalarType> dtype,
                        const char* op, const char* node) {
  GR_CHECK(x.defined(), op, ": undefined tensor argument");
  GR_CHECK(x.is_floating_point(), op, ": Expected a floating point or complex tensor as input. Got ", x.scalar_type());
  // Checked before the conversion below, which would otherwise hide a bad dtype.
  GR_CHECK(!dtype || is_floating_point(*dtype), op, ": dtype should be floating point or complex, but got ", *dtype);
  GR_CHECK(!dtype || promote_types(x.scalar_type(), *dtype) == *dtype, op, ": the dtype of the input (",
           x.scalar_type(), ") should be convertible without narrowing to the specified dtype (", *dtype, ")");
  Tensor in = dtype && *dtype != x.scalar_type() ? x.to(*dtype) : x;
  Tensor out = native::vector_norm(in, p, dims, keepdim, std::nullopt, op);
  if (autograd::needs_grad(in)) {
    SavedTensor sx(in), so(out, /*is_output=*/true);  // Note [Saved outputs]
    record(node, {in}, {out},
           [sx, so, p, r = ReducedDims(in.sizes(), dims, keepdim, op)](const TensorList& g, const std::vector<bool>&) {
             return TensorList{norm_backward(r.kept(g[0]), sx.unpack(), r.kept(so.unpack()), p)};
           });
  }
  return out;
}

double order_of(const std::optional<Scalar>& p) { return p ? p->to_double() : 2.0; }

}  // namespace

Tensor norm(const Tensor& x, const Scalar& p) { return vector_norm_impl(x, p.to_double(), {}, false, std::nullopt, "norm", "NormBackward0"); }
Tensor norm(const Tensor& x, const std::optional<Scalar>& p, ScalarType dtype) {
  return vector_norm_impl(x, order_of(p), {}, false, dtype, "norm", "NormBackward2");
}
Tensor norm(const Tensor& x, const std::optional<Scalar>& p, IntArrayRef dim, bool keepdim) {
  return vector_norm_impl(x, order_of(p), dim, keepdim, std::nullopt, "norm", "NormBackward1");
}
Tensor norm(const Tensor& x, const std::optional<Scalar>& p, IntArrayRef dim, bool keepdim, ScalarType dtype) {
  return vector_norm_impl(x, order_of(p), dim, keepdim, dtype, "norm", "NormBackward3");
}
Tensor norm(const Tensor& x, std::string_view p, IntArrayRef dim, bool keepdim) {
  GR_CHECK(p == "fro", "norm: p = \"", std::string(p),
           "\" is not supported (\"fro\" and numbers are; the nuclear norm needs an SVD, which gradring does not have)");
  return frobenius_norm(x, dim, keepdim);
}
Tensor frobenius_norm(const Tensor& x, IntArrayRef dim, bool keepdim) {
  return vector_norm_impl(x, 2, dim, keepdim, std::nullopt, "frobenius_norm", "NormBackward1");
}

namespace linalg {

Tensor vector_norm(const Tensor& x, const Scalar& ord, OptionalIntArrayRef dim, bool keepdim,
                   std::optional<ScalarType> dtype) {
  return vector_norm_impl(x, ord.to_double(), autograd::dims_or_all(dim), keepdim, dtype, "linalg.vector_norm",
                          "LinalgVectorNormBackward0");
}

namespace {
void check_matrix(const Tensor& x, IntArrayRef dim) {
  GR_CHECK(x.defined(), "linalg.matrix_norm: undefined tensor argument");
  GR_CHECK(x.dim() >= 2, "linalg.matrix_norm: The input tensor A must have at least 2 dimensions, got ", x.sizes());
  GR_CHECK(dim.size() == 2, "linalg.matrix_norm: dim must be a 2-tuple of ints, got ", dim);
  GR_CHECK(wrap_dim(dim[0], x.dim(), "linalg.matrix_norm") != wrap_dim(dim[1], x.dim(), "linalg.matrix_norm"),
           "linalg.matrix_norm: dims must be different, got ", dim);
  GR_CHECK(x.is_floating_point(), "linalg.matrix_norm: Expected a floating point or complex tensor as input. Got ",
           x.scalar_type());
}
}  // namespace

Tensor matrix_norm(const Tensor& x, const Scalar& ord, IntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) {
  check_matrix(x, dim);
  const double p = ord.to_double();
  GR_CHECK(p == 1 || p == -1 || std::isinf(p), "linalg.matrix_norm: ord = ", p,
           " is not supported: ord = 2, -2 and \"nuc\" need an SVD, which gradring does not have (supported: \"fro\", "
           "1, -1, inf, -inf)");
  Tensor in = dtype && *dtype != x.scalar_type() ? x.to(*dtype) : x;
  const int64_t d0 = wrap_dim(dim[0], in.dim(), "linalg.matrix_norm"), d1 = wrap_dim(dim[1], in.dim(), "linalg.matrix_norm");
  // ord +-1: the largest/smallest column sum of |x| (summed over d0); +-inf: row sums (over d1).
  const bool columns = std::abs(p) == 1;
  Tensor sums = sum(abs(in), columns ? d0 : d1, true);
  Tensor out = p > 0 ? amax(sums, columns ? d1 : d0, true) : amin(sums, columns ? d1 : d0, true);
  return keepdim ? out : out.squeeze(std::max(d0, d1)).squeeze(std::min(d0, d1));
}

Tensor matrix_norm(const Tensor& x, std::string_view ord, IntArrayRef dim, bool keepdim,
                   std::optional<ScalarType> dtype) {
  check_matrix(x, dim);
  GR_CHECK(ord == "fro", "linalg.matrix_norm: ord = \"", std::string(ord),
           "\" is not supported: \"nuc\" needs an SVD, which gradring does not have (supported: \"fro\", 1, -1, inf, "
           "-inf)");
  return vector_norm(x, 2, dim, keepdim, dtype);
}

}  // namespace linalg

Tensor Tensor::norm(const Scalar& p) const { return gr::norm(*this, p); }
Tensor Tensor::norm(const std::optional<Scalar>& p, ScalarType dtype) const { return gr::norm(*this, p, dtype); }
Tensor Tensor::norm(const std::optional<Scalar>& p, IntArrayRef dim, bool keepdim) const {
  return gr::norm(*this, p, dim, keepdim);
}
Tensor Tensor::norm(const std::optional<Scalar>& p, IntArrayRef dim, bool keepdim, ScalarType dtype) const {
  return gr::norm(*this, p, dim, keepdim, dtype);
}

}  // namespace gr
