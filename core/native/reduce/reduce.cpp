// Reductions: layout planning ([outer, R, inner] views), result dtypes, argument checks and
// dispatch. The CPU kernels are in reduce_cpu.cpp, the CUDA ones in cuda_kernels/reduce*.cu.
#include "core/native/reduce/reduce.h"

#include <cmath>

#include "core/factory.h"
#include "core/native/copy/copy.h"
#include "core/native/elementwise/elementwise.h"
#include "core/native/shape/shape.h"
#include "core/native/activation/softmax.h"

namespace gr::native {

GR_DEFINE_DISPATCH(SumFn, sum_stub);
GR_DEFINE_DISPATCH(ReduceFn, mean_stub);
GR_DEFINE_DISPATCH(ReduceFn, prod_stub);
GR_DEFINE_DISPATCH(ReduceFn, amax_stub);
GR_DEFINE_DISPATCH(ReduceFn, amin_stub);
GR_DEFINE_DISPATCH(ReduceFn, norm_stub);
GR_DEFINE_DISPATCH(ReduceFn, any_stub);
GR_DEFINE_DISPATCH(ReduceFn, all_stub);
GR_DEFINE_DISPATCH(ReduceFn, count_nonzero_stub);
GR_DEFINE_DISPATCH(VarFn, var_stub);
GR_DEFINE_DISPATCH(MaxFn, max_stub);

std::vector<bool> reduction_mask(IntArrayRef dims, int64_t ndim, const char* op) {
  std::vector<bool> mask(static_cast<size_t>(ndim), dims.empty());
  for (int64_t d : dims) {
    int64_t w = wrap_dim(d, ndim, op);
    if (ndim == 0) continue;
    GR_CHECK(!mask[w], op, ": dim ", w, " appears more than once in the list of dims");
    mask[w] = true;
  }
  return mask;
}

std::vector<int64_t> reduced_shape(IntArrayRef sizes, const std::vector<bool>& mask, bool keepdim) {
  std::vector<int64_t> out;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (!mask[d]) out.push_back(sizes[d]);
    else if (keepdim) out.push_back(1);
  }
  return out;
}

int64_t reduced_numel(IntArrayRef sizes, const std::vector<bool>& mask) {
  int64_t n = 1;
  for (size_t d = 0; d < sizes.size(); ++d)
    if (mask[d]) n *= sizes[d];
  return n;
}

ScalarType sum_result_type(ScalarType input, std::optional<ScalarType> dtype) {
  if (dtype) return *dtype;
  return is_floating_point(input) ? input : kInt64;
}

namespace {

// The input as a contiguous [outer, R, inner] block with R the reduced elements.
struct Plan {
  Tensor input;
  int64_t outer = 1, R = 1, inner = 1;
};

Plan plan_reduction(const Tensor& x, const std::vector<bool>& mask) {
  Plan p;
  const int64_t nd = x.dim();
  int64_t first = nd, last = -1;
  for (int64_t d = 0; d < nd; ++d)
    if (mask[d] && x.size(d) != 1) first = std::min(first, d), last = std::max(last, d);
  bool block = true;
  for (int64_t d = first; d <= last; ++d) block = block && (mask[d] || x.size(d) == 1);
  if (block && x.is_contiguous()) {
    p.input = x;
    for (int64_t d = 0; d < nd; ++d) {
      if (d < first) p.outer *= x.size(d);
      else if (d <= last) p.R *= x.size(d);
      else p.inner *= x.size(d);
    }
    return p;
  }
  // General case: kept dims first, reduced dims last, made contiguous.
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < nd; ++d)
    if (!mask[d]) perm.push_back(d), p.outer *= x.size(d);
  for (int64_t d = 0; d < nd; ++d)
    if (mask[d]) perm.push_back(d), p.R *= x.size(d);
  std::vector<int64_t> sizes, strides;
  for (int64_t d : perm) sizes.push_back(x.size(d)), strides.push_back(x.stride(d));
  p.input = contiguous(make_view(x, sizes, strides, x.storage_offset()));
  return p;
}

// Reduces x over `dims` into a new tensor of `out_dtype` with the stub (x already has the
// dtype the stub computes from).
Tensor run_reduce(const DispatchStub<ReduceFn>& stub, const Tensor& x, IntArrayRef dims, bool keepdim,
                  ScalarType out_dtype, const char* op, double param = 0) {
  GR_CHECK(x.defined(), op, ": undefined tensor argument");
  std::vector<bool> mask = reduction_mask(dims, x.dim(), op);
  Tensor out = empty(reduced_shape(x.sizes(), mask, keepdim), TensorOptions(out_dtype).device(x.device()));
  if (out.numel() == 0) return out;
  Plan p = plan_reduction(x, mask);
  stub(x.device(), p.input.data_ptr(), out.data_ptr(), p.outer, p.R, p.inner, x.scalar_type(), param);
  return out;
}

// Reductions without an identity (amax, amin, the +-inf norms) refuse to reduce an empty
// dim into a non-empty result. Returns the first such dim, or -1.
int64_t empty_reduced_dim(const Tensor& x, IntArrayRef dims, const char* op) {
  std::vector<bool> mask = reduction_mask(dims, x.dim(), op);
  if (reduced_numel(x.sizes(), mask) != 0) return -1;
  int64_t out_numel = 1;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (!mask[d]) out_numel *= x.size(d);
  if (out_numel == 0) return -1;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (mask[d] && x.size(d) == 0) return d;
  return -1;
}

void check_nonempty(const Tensor& x, IntArrayRef dims, const char* op) {
  int64_t d = empty_reduced_dim(x, dims, op);
  GR_CHECK(d < 0, op, "(): Expected reduction dim ", d, " to have non-zero size (input ", x.sizes(),
           "; the operation has no identity)");
}

}  // namespace

Tensor sum(const Tensor& x, IntArrayRef dims, bool keepdim, std::optional<ScalarType> dtype) {
  GR_CHECK(x.defined(), "sum: undefined tensor argument");
  const ScalarType out_t = sum_result_type(x.scalar_type(), dtype);
  // An explicit dtype converts the input first; integers and bool otherwise widen in the kernel.
  Tensor in = dtype ? to_dtype(x, *dtype) : x;
  std::vector<bool> mask = reduction_mask(dims, in.dim(), "sum");
  Tensor out = empty(reduced_shape(in.sizes(), mask, keepdim), TensorOptions(out_t).device(in.device()));
  if (out.numel() == 0) return out;
  Plan p = plan_reduction(in, mask);
  sum_stub(in.device(), p.input.data_ptr(), out.data_ptr(), p.outer, p.R, p.inner, in.scalar_type(), out_t);
  return out;
}

Tensor mean(const Tensor& x, IntArrayRef dims, bool keepdim, std::optional<ScalarType> dtype) {
  GR_CHECK(x.defined(), "mean: undefined tensor argument");
  const ScalarType t = dtype.value_or(x.scalar_type());
  GR_CHECK(is_floating_point(t), "mean(): could not infer output dtype. ",
           dtype ? "Optional dtype must be either a floating point or complex dtype. Got: "
                 : "Input dtype must be either a floating point or complex dtype. Got: ",
           t);
  const double count = static_cast<double>(reduced_numel(x.sizes(), reduction_mask(dims, x.dim(), "mean")));
  return run_reduce(mean_stub, to_dtype(x, t), dims, keepdim, t, "mean", count);
}

Tensor prod(const Tensor& x, IntArrayRef dims, bool keepdim, std::optional<ScalarType> dtype) {
  GR_CHECK(x.defined(), "prod: undefined tensor argument");
  Tensor in = dtype ? to_dtype(x, *dtype) : x;
  return run_reduce(prod_stub, in, dims, keepdim, sum_result_type(in.scalar_type(), std::nullopt), "prod");
}

Tensor amax(const Tensor& x, IntArrayRef dims, bool keepdim) {
  GR_CHECK(x.defined(), "amax: undefined tensor argument");
  check_nonempty(x, dims, "amax");
  return run_reduce(amax_stub, x, dims, keepdim, x.scalar_type(), "amax");
}

Tensor amin(const Tensor& x, IntArrayRef dims, bool keepdim) {
  GR_CHECK(x.defined(), "amin: undefined tensor argument");
  check_nonempty(x, dims, "amin");
  return run_reduce(amin_stub, x, dims, keepdim, x.scalar_type(), "amin");
}

Tensor vector_norm(const Tensor& x, double p, IntArrayRef dims, bool keepdim, std::optional<ScalarType> dtype,
                   const char* op) {
  GR_CHECK(x.defined(), op, ": undefined tensor argument");
  GR_CHECK(x.is_floating_point(), op, ": Expected a floating point or complex tensor as input. Got ",
           x.scalar_type());
  GR_CHECK(!dtype || is_floating_point(*dtype), op, ": dtype should be floating point or complex, but got ", *dtype);
  GR_CHECK(!dtype || promote_types(x.scalar_type(), *dtype) == *dtype, op, ": the dtype of the input (",
           x.scalar_type(), ") should be convertible without narrowing to the specified dtype (", *dtype, ")");
  if (std::isinf(p)) {
    const int64_t d = empty_reduced_dim(x, dims, op);
    GR_CHECK(d < 0 || !dims.empty(), op, " cannot compute the ", p > 0 ? "" : "-",
             "inf norm on an empty tensor because the operation does not have an identity");
    GR_CHECK(d < 0, op, " cannot compute the ", p > 0 ? "" : "-", "inf norm on the dimension ", d,
             " because this dimension is empty and the operation does not have an identity (input ", x.sizes(), ")");
  }
  Tensor in = dtype ? to_dtype(x, *dtype) : x;
  return run_reduce(norm_stub, in, dims, keepdim, in.scalar_type(), op, p);
}

Tensor any(const Tensor& x, IntArrayRef dims, bool keepdim) {
  GR_CHECK(x.defined(), "any: undefined tensor argument");
  return run_reduce(any_stub, x, dims, keepdim, x.scalar_type() == kUInt8 ? kUInt8 : kBool, "any");
}

Tensor all(const Tensor& x, IntArrayRef dims, bool keepdim) {
  GR_CHECK(x.defined(), "all: undefined tensor argument");
  return run_reduce(all_stub, x, dims, keepdim, x.scalar_type() == kUInt8 ? kUInt8 : kBool, "all");
}

Tensor count_nonzero(const Tensor& x, IntArrayRef dims) {
  GR_CHECK(x.defined(), "count_nonzero: undefined tensor argument");
  return run_reduce(count_nonzero_stub, x, dims, false, kInt64, "count_nonzero");
}

std::pair<Tensor, Tensor> var_mean(const Tensor& x, IntArrayRef dims, double correction, bool keepdim,
                                   bool take_sqrt) {
  const char* op = take_sqrt ? "std" : "var";
  GR_CHECK(x.defined(), op, ": undefined tensor argument");
  GR_CHECK(x.is_floating_point(), op, "(): std and var only support floating point and complex dtypes, got ",
           x.scalar_type());
  std::vector<bool> mask = reduction_mask(dims, x.dim(), op);
  std::vector<int64_t> shape = reduced_shape(x.sizes(), mask, keepdim);
  Tensor out = empty(shape, x.options()), mean_out = empty(shape, x.options());
  if (out.numel() == 0) return {out, mean_out};
  Plan p = plan_reduction(x, mask);
  var_stub(x.device(), p.input.data_ptr(), out.data_ptr(), mean_out.data_ptr(), p.outer, p.R, p.inner,
           x.scalar_type(), correction, take_sqrt);
  return {out, mean_out};
}

Tensor var(const Tensor& x, IntArrayRef dims, double correction, bool keepdim) {
  return var_mean(x, dims, correction, keepdim, false).first;
}
Tensor std(const Tensor& x, IntArrayRef dims, double correction, bool keepdim) {
  return var_mean(x, dims, correction, keepdim, true).first;
}

Tensor logsumexp(const Tensor& x, IntArrayRef dims, bool keepdim) {
  GR_CHECK(x.defined(), "logsumexp: undefined tensor argument");
  Tensor in = x.is_floating_point() ? x : to_dtype(x, kFloat32);
  std::vector<bool> mask = reduction_mask(dims, in.dim(), "logsumexp");
  if (reduced_numel(in.sizes(), mask) == 0)
    return full(reduced_shape(in.sizes(), mask, keepdim), -INFINITY, in.options());
  if (logsumexp_stub.has(in.device().type()) && !is_reduced_float(in.scalar_type())) {
    Tensor out = empty(reduced_shape(in.sizes(), mask, keepdim), in.options());
    if (out.numel() == 0) return out;
    Plan p = plan_reduction(in, mask);
    logsumexp_stub(in.device(), p.input.data_ptr(), out.data_ptr(), p.outer, p.R, p.inner, in.scalar_type());
    return out;
  }
  // Elsewhere, composed of other kernels:  // exp(x - max) never overflows; an infinite max (all -inf, or a +inf) is shifted by 0 instead.
  Tensor m = amax(in, dims, true);
  Tensor inf = full({}, INFINITY, m.options());
  m = where(eq(abs(m), inf), zeros({}, m.options()), m);
  Tensor s = log(sum(exp(sub(in, m)), dims, keepdim));
  return add(s, keepdim ? m : reshape(m, s.sizes()));
}

// ---- max / min with indices ----

namespace {

// A contiguous 1-D view of all of x's elements.
Tensor flat(const Tensor& x) {
  Tensor c = contiguous(x);
  return make_view(c, {c.numel()}, {1}, c.storage_offset());
}

std::pair<Tensor, Tensor> max_min(const Tensor& x, int64_t dim, bool keepdim, bool is_max, const char* op) {
  GR_CHECK(x.defined(), op, ": undefined tensor argument");
  int64_t d = wrap_dim(dim, x.dim(), op);
  GR_CHECK(x.dim() == 0 || x.size(d) > 0, op, "(): Expected reduction dim ", d,
           " to have non-zero size (input ", x.sizes(), "; the operation has no identity)");
  std::vector<bool> mask(static_cast<size_t>(x.dim()), false);
  if (x.dim() > 0) mask[d] = true;
  std::vector<int64_t> shape = reduced_shape(x.sizes(), mask, keepdim);
  Tensor values = empty(shape, x.options());
  Tensor indices = empty(shape, TensorOptions(kInt64).device(x.device()));
  if (values.numel() == 0) return {values, indices};
  Tensor c = contiguous(x);
  int64_t outer = 1, R = x.dim() ? x.size(d) : 1, inner = 1;
  for (int64_t i = 0; i < d; ++i) outer *= x.size(i);
  for (int64_t i = d + 1; i < x.dim(); ++i) inner *= x.size(i);
  max_stub(x.device(), c.data_ptr(), values.data_ptr(), indices.data_ptr<int64_t>(), outer, R, inner,
           x.scalar_type(), is_max);
  return {values, indices};
}

// argmax/argmin: over `dim`, or over the flattened tensor.
Tensor arg_extreme(const Tensor& x, std::optional<int64_t> dim, bool keepdim, bool is_max) {
  const char* op = is_max ? "argmax" : "argmin";
  if (dim) return max_min(x, *dim, keepdim, is_max, op).second;
  GR_CHECK(x.defined() && x.numel() > 0, op, "(): Expected reduction dim to be specified for input.numel() == 0.");
  Tensor i = max_min(flat(x), 0, false, is_max, op).second;
  return keepdim ? reshape(i, std::vector<int64_t>(static_cast<size_t>(x.dim()), 1)) : i;
}

}  // namespace

std::pair<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim) {
  return max_min(x, dim, keepdim, true, "max");
}
std::pair<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim) {
  return max_min(x, dim, keepdim, false, "min");
}

Tensor max(const Tensor& x) {
  GR_CHECK(x.defined() && x.numel() > 0,
           "max(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the "
           "'dim' argument (a non-empty tensor is needed; the operation has no identity)");
  return amax(x);
}
Tensor min(const Tensor& x) {
  GR_CHECK(x.defined() && x.numel() > 0,
           "min(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the "
           "'dim' argument (a non-empty tensor is needed; the operation has no identity)");
  return amin(x);
}
Tensor argmax(const Tensor& x, std::optional<int64_t> dim, bool keepdim) { return arg_extreme(x, dim, keepdim, true); }
Tensor argmax(const Tensor& x) { return arg_extreme(x, std::nullopt, false, true); }
Tensor argmin(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  return arg_extreme(x, dim, keepdim, false);
}

std::vector<int64_t> sum_to_dims(IntArrayRef sizes, IntArrayRef shape) {
  const int64_t ndim = static_cast<int64_t>(sizes.size()), lead = ndim - static_cast<int64_t>(shape.size());
  GR_CHECK(lead >= 0, "sum_to: shape ", shape, " has more dims than ", sizes);
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < ndim; ++d) {
    if (d < lead) dims.push_back(d);
    else if (shape[d - lead] == 1 && sizes[d] != 1) dims.push_back(d);
    else GR_CHECK(shape[d - lead] == sizes[d], "sum_to: shape ", shape, " does not broadcast to ", sizes);
  }
  return dims;
}

Tensor sum_to(const Tensor& x, IntArrayRef shape) {
  if (x.sizes() == shape) return x;
  const int64_t lead = x.dim() - static_cast<int64_t>(shape.size());
  std::vector<int64_t> dims = sum_to_dims(x.sizes(), shape);
  Tensor s = dims.empty() ? x : sum(x, dims, true);
  // Drop the leading dims that were kept as size 1.
  std::vector<int64_t> strides(s.strides().begin() + lead, s.strides().end());
  return make_view(s, shape.vec(), strides, s.storage_offset());
}

}  // namespace gr::native
