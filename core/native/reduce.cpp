// Reductions: layout planning ([outer, R, inner] views) and the CPU kernels.
#include "core/native/reduce.h"

#include <numeric>

#include "core/factory.h"
#include "core/functors.h"
#include "core/native/copy.h"
#include "core/native/elementwise.h"
#include "core/parallel.h"

namespace gr::native {

GR_DEFINE_DISPATCH(SumFn, sum_stub);
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

template <class In, class Out>
void sum_kernel(const In* in, Out* out, int64_t outer, int64_t R, int64_t inner) {
  using Acc = acc_t<In>;
  if (inner == 1) {
    parallel_for(0, outer, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(R, 1)), [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        const In* row = in + o * R;
        Acc acc[4] = {0, 0, 0, 0};
        int64_t r = 0;
        for (; r + 4 <= R; r += 4)
          for (int k = 0; k < 4; ++k) acc[k] += static_cast<Acc>(row[r + k]);
        for (; r < R; ++r) acc[0] += static_cast<Acc>(row[r]);
        out[o] = static_cast<Out>((acc[0] + acc[1]) + (acc[2] + acc[3]));
      }
    });
    return;
  }
  // Column sums: accumulate rows of `inner` values into a tile buffer.
  constexpr int64_t kTile = 512;
  const int64_t tiles = (inner + kTile - 1) / kTile;
  parallel_for(0, outer * tiles, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(R * kTile, 1)),
               [&](int64_t b, int64_t e) {
                 Acc acc[kTile];
                 for (int64_t task = b; task < e; ++task) {
                   int64_t o = task / tiles, j0 = (task % tiles) * kTile, n = std::min(kTile, inner - j0);
                   for (int64_t j = 0; j < n; ++j) acc[j] = 0;
                   const In* base = in + o * R * inner + j0;
                   for (int64_t r = 0; r < R; ++r)
                     for (int64_t j = 0; j < n; ++j) acc[j] += static_cast<Acc>(base[r * inner + j]);
                   for (int64_t j = 0; j < n; ++j) out[o * inner + j0 + j] = static_cast<Out>(acc[j]);
                 }
               });
}

void sum_cpu(const void* in, void* out, int64_t outer, int64_t R, int64_t inner, ScalarType in_t, ScalarType out_t) {
  dispatch_all(in_t, "sum", [&]<class In>() {
    dispatch_all(out_t, "sum", [&]<class Out>() {
      if constexpr (std::is_same_v<In, BFloat16> || std::is_same_v<In, Half> || std::is_same_v<Out, BFloat16> ||
                    std::is_same_v<Out, Half> || std::is_same_v<Out, bool>) {
        GR_ERROR("sum: dtype ", in_t, " -> ", out_t, " is not supported");
      } else {
        sum_kernel(static_cast<const In*>(in), static_cast<Out*>(out), outer, R, inner);
      }
    });
  });
}
GR_REGISTER_KERNEL(sum_stub, kCPU, &sum_cpu);

template <class T>
void max_kernel(const T* in, T* values, int64_t* indices, int64_t outer, int64_t R, int64_t inner, bool is_max) {
  parallel_for(0, outer * inner, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(R, 1)), [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) {
      int64_t o = k / inner, j = k % inner;
      const T* p = in + o * R * inner + j;
      const functors::ArgExtreme<T> beats{is_max};  // shared with the CUDA kernel
      T best = p[0];
      int64_t best_i = 0;
      for (int64_t r = 1; r < R && !math::isnan(best); ++r) {
        T v = p[r * inner];
        if (beats(v, r, best, best_i)) best = v, best_i = r;
      }
      values[k] = best;
      if (indices) indices[k] = best_i;
    }
  });
}

void max_cpu(const void* in, void* values, int64_t* indices, int64_t outer, int64_t R, int64_t inner, ScalarType t,
             bool is_max) {
  dispatch_arith(t, "max", [&]<class T>() {
    max_kernel(static_cast<const T*>(in), static_cast<T*>(values), indices, outer, R, inner, is_max);
  });
}
GR_REGISTER_KERNEL(max_stub, kCPU, &max_cpu);

// A contiguous 1-D view of all of x's elements.
Tensor flat(const Tensor& x) {
  Tensor c = contiguous(x);
  return make_view(c, {c.numel()}, {1}, c.storage_offset());
}

ScalarType sum_dtype(ScalarType t) { return is_floating_point(t) ? t : kInt64; }

std::pair<Tensor, Tensor> max_min(const Tensor& x, int64_t dim, bool keepdim, bool is_max) {
  if (is_reduced_float(x.scalar_type())) {  // Note [Reduced float math]
    auto [v, i] = max_min(to_dtype(x, kFloat32), dim, keepdim, is_max);
    return {to_dtype(v, x.scalar_type()), i};
  }
  const char* op = is_max ? "max" : "min";
  int64_t d = wrap_dim(dim, x.dim(), op);
  GR_CHECK(x.dim() == 0 || x.size(d) > 0, op, "(): cannot reduce over dimension ", d,
           " of size 0 (the operation has no identity)");
  std::vector<bool> mask(static_cast<size_t>(x.dim()), false);
  if (x.dim() > 0) mask[d] = true;
  Tensor c = contiguous(x);
  int64_t outer = 1, R = x.dim() ? x.size(d) : 1, inner = 1;
  for (int64_t i = 0; i < d; ++i) outer *= x.size(i);
  for (int64_t i = d + 1; i < x.dim(); ++i) inner *= x.size(i);
  std::vector<int64_t> shape = reduced_shape(x.sizes(), mask, keepdim);
  Tensor values = empty(shape, x.options());
  Tensor indices = empty(shape, TensorOptions(kInt64).device(x.device()));
  max_stub(x.device(), c.data_ptr(), values.data_ptr(), indices.data_ptr<int64_t>(), outer, R, inner,
           x.scalar_type(), is_max);
  return {values, indices};
}

}  // namespace

Tensor sum(const Tensor& x, IntArrayRef dims, bool keepdim) {
  // Reduced floats sum in float32 (Note [Reduced float math]), narrow integers in int64.
  const ScalarType t = x.scalar_type();
  if (is_reduced_float(t)) return to_dtype(sum(to_dtype(x, kFloat32), dims, keepdim), t);
  if (t == kInt32 || t == kInt16 || t == kInt8) return sum(to_dtype(x, kInt64), dims, keepdim);
  std::vector<bool> mask = reduction_mask(dims, x.dim(), "sum");
  Tensor out = empty(reduced_shape(x.sizes(), mask, keepdim), TensorOptions(sum_dtype(x.scalar_type())).device(x.device()));
  Plan p = plan_reduction(x, mask);
  if (out.numel() == 0) return out;
  sum_stub(x.device(), p.input.data_ptr(), out.data_ptr(), p.outer, p.R, p.inner, x.scalar_type(),
           out.scalar_type());
  return out;
}

Tensor mean(const Tensor& x, IntArrayRef dims, bool keepdim) {
  GR_CHECK(x.is_floating_point(), "mean: could not infer output dtype; input must be floating point, got ",
           x.scalar_type());
  if (is_reduced_float(x.scalar_type()))  // Note [Reduced float math]
    return to_dtype(mean(to_dtype(x, kFloat32), dims, keepdim), x.scalar_type());
  std::vector<bool> mask = reduction_mask(dims, x.dim(), "mean");
  int64_t count = 1;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (mask[d]) count *= x.size(d);
  Tensor s = sum(x, dims, keepdim);
  return div(s, full({}, static_cast<double>(count), s.options()));
}

Tensor var(const Tensor& x, IntArrayRef dims, int64_t correction, bool keepdim) {
  GR_CHECK(x.is_floating_point(), "var: input must be floating point, got ", x.scalar_type());
  if (is_reduced_float(x.scalar_type()))  // Note [Reduced float math]
    return to_dtype(var(to_dtype(x, kFloat32), dims, correction, keepdim), x.scalar_type());
  std::vector<bool> mask = reduction_mask(dims, x.dim(), "var");
  int64_t count = 1;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (mask[d]) count *= x.size(d);
  Tensor centered = sub(x, mean(x, dims, true));
  Tensor ss = sum(mul(centered, centered), dims, keepdim);
  double denom = std::max<double>(0.0, static_cast<double>(count - correction));
  return div(ss, full({}, denom, ss.options()));  // 0 dof gives inf/nan, as in torch
}

std::pair<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim) { return max_min(x, dim, keepdim, true); }
std::pair<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim) { return max_min(x, dim, keepdim, false); }

Tensor max(const Tensor& x) {
  GR_CHECK(x.numel() > 0, "max(): expected a non-empty tensor (the operation has no identity)");
  return max_min(flat(x), 0, false, true).first;
}
Tensor min(const Tensor& x) {
  GR_CHECK(x.numel() > 0, "min(): expected a non-empty tensor (the operation has no identity)");
  return max_min(flat(x), 0, false, false).first;
}
Tensor argmax(const Tensor& x, int64_t dim, bool keepdim) { return max_min(x, dim, keepdim, true).second; }
Tensor argmax(const Tensor& x) {
  GR_CHECK(x.numel() > 0, "argmax(): expected a non-empty tensor");
  return max_min(flat(x), 0, false, true).second;
}

Tensor sum_to(const Tensor& x, IntArrayRef shape) {
  if (x.sizes() == shape) return x;
  const int64_t lead = x.dim() - static_cast<int64_t>(shape.size());
  GR_CHECK(lead >= 0, "sum_to: shape ", shape, " has more dims than ", x.sizes());
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (d < lead) dims.push_back(d);
    else if (shape[d - lead] == 1 && x.size(d) != 1) dims.push_back(d);
    else GR_CHECK(shape[d - lead] == x.size(d), "sum_to: shape ", shape, " does not broadcast to ", x.sizes());
  }
  Tensor s = dims.empty() ? x : sum(x, dims, true);
  // Drop the leading dims that were kept as size 1.
  std::vector<int64_t> strides(s.strides().begin() + lead, s.strides().end());
  return make_view(s, shape.vec(), strides, s.storage_offset());
}

}  // namespace gr::native
