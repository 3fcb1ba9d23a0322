// var, std, var_mean and std_mean (correction or unbiased, over a dim list) with one backward
// for both results: d var/dx = 2 (x - mean) / (N - correction), d std = d var / (2 std).
#include <algorithm>

#include "autograd/function.h"
#include "autograd/functions/reduce_grad.h"
#include "autograd/ops.h"
#include "core/native/reduce.h"

namespace gr {

using autograd::record;
using autograd::ReducedDims;
using autograd::SavedTensor;

namespace {

double correction_of(const std::optional<Scalar>& correction) { return correction ? correction->to_double() : 1.0; }

// var (or std) and the mean over dims; the mean is an output of the node only when asked for.
std::tuple<Tensor, Tensor> moments(const Tensor& x, OptionalIntArrayRef dim, double correction, bool keepdim,
                                   bool take_sqrt, bool want_mean) {
  const IntArrayRef dims = autograd::dims_or_all(dim);
  auto [v, m] = native::var_mean(x, dims, correction, keepdim, take_sqrt);
  if (autograd::needs_grad(x)) {
    const char* name = take_sqrt ? (want_mean ? "StdMeanBackward0" : "StdBackward0")
                                 : (want_mean ? "VarMeanBackward0" : "VarBackward0");
    SavedTensor sx(x), sv(take_sqrt ? v : Tensor(), /*is_output=*/true);  // Note [Saved outputs]
    record(name, {x}, want_mean ? TensorList{v, m} : TensorList{v},
           [sx, sv, r = ReducedDims(x.sizes(), dims, keepdim, name), dims = dims.vec(), correction, take_sqrt,
            want_mean](const TensorList& g, const std::vector<bool>&) {
             const Tensor& xv = sx.unpack();
             const double dof = std::max(static_cast<double>(r.count) - correction, 0.0);
             Tensor centered = xv - gr::mean(xv, dims, true);
             Tensor scale = take_sqrt ? r.kept(g[0]) / (r.kept(sv.unpack()) * dof) : r.kept(g[0]) * (2.0 / dof);
             Tensor gx = centered * scale;
             if (want_mean) gx = gx + r.expand(g[1] / static_cast<double>(r.count));
             return TensorList{gx};
           });
  }
  return {v, m};
}

}  // namespace

Tensor var(const Tensor& x, OptionalIntArrayRef dim, bool unbiased, bool keepdim) {
  return std::get<0>(moments(x, dim, unbiased, keepdim, false, false));
}
Tensor var(const Tensor& x, OptionalIntArrayRef dim, const std::optional<Scalar>& correction, bool keepdim) {
  return std::get<0>(moments(x, dim, correction_of(correction), keepdim, false, false));
}
Tensor std(const Tensor& x, OptionalIntArrayRef dim, bool unbiased, bool keepdim) {
  return std::get<0>(moments(x, dim, unbiased, keepdim, true, false));
}
Tensor std(const Tensor& x, OptionalIntArrayRef dim, const std::optional<Scalar>& correction, bool keepdim) {
  return std::get<0>(moments(x, dim, correction_of(correction), keepdim, true, false));
}

std::tuple<Tensor, Tensor> var_mean(const Tensor& x, OptionalIntArrayRef dim, bool unbiased, bool keepdim) {
  return moments(x, dim, unbiased, keepdim, false, true);
}
std::tuple<Tensor, Tensor> var_mean(const Tensor& x, OptionalIntArrayRef dim, const std::optional<Scalar>& correction,
                                    bool keepdim) {
  return moments(x, dim, correction_of(correction), keepdim, false, true);
}
std::tuple<Tensor, Tensor> std_mean(const Tensor& x, OptionalIntArrayRef dim, bool unbiased, bool keepdim) {
  return moments(x, dim, unbiased, keepdim, true, true);
}
std::tuple<Tensor, Tensor> std_mean(const Tensor& x, OptionalIntArrayRef dim, const std::optional<Scalar>& correction,
                                    bool keepdim) {
  return moments(x, dim, correction_of(correction), keepdim, true, true);
}

Tensor Tensor::var(OptionalIntArrayRef dim, bool unbiased, bool keepdim) const {
  return gr::var(*this, dim, unbiased, keepdim);
}
Tensor Tensor::var(OptionalIntArrayRef dim, const std::optional<Scalar>& correction, bool keepdim) const {
  return gr::var(*this, dim, correction, keepdim);
}
Tensor Tensor::std(OptionalIntArrayRef dim, bool unbiased, bool keepdim) const {
  return gr::std(*this, dim, unbiased, keepdim);
}
Tensor Tensor::std(OptionalIntArrayRef dim, const std::optional<Scalar>& correction, bool keepdim) const {
  return gr::std(*this, dim, correction, keepdim);
}

}  // namespace gr
