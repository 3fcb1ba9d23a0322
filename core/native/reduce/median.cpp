// median/nanmedian: argument checks, layout, and the CPU kernel (a selection per output with
// std::nth_element over the run's indices). The value picked has the stable rank (R - 1) / 2
// (ties by position, NaN last), the index torch reports; the CUDA kernel picks the same.
#include "core/native/reduce/median.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "core/factory.h"
#include "core/native/copy/copy.h"
#include "core/native/reduce/reduce.h"
#include "core/parallel.h"
#include "core/reduce_functors.h"

namespace gr::native {

GR_DEFINE_DISPATCH(MedianFn, median_stub);

namespace {

template <class T>
void median_kernel(const T* in, T* values, int64_t* indices, int64_t outer, int64_t R, int64_t inner,
                   bool ignore_nan) {
  using V = reduce_ops::value_t<T>;
  parallel_for(0, outer * inner, std::max<int64_t>(1, kGrainSize / R), [&](int64_t b, int64_t e) {
    std::vector<int64_t> idx(static_cast<size_t>(R));
    for (int64_t k = b; k < e; ++k) {
      const T* p = in + (k / inner) * R * inner + k % inner;
      auto at = [&](int64_t r) { return static_cast<V>(p[r * inner]); };
      int64_t nans = 0, first_nan = -1;
      for (int64_t r = 0; r < R; ++r)
        if (math::isnan(at(r))) nans++, first_nan = first_nan < 0 ? r : first_nan;
      int64_t pick;
      if (nans > 0 && (!ignore_nan || nans == R)) {
        pick = first_nan;
      } else {
        std::iota(idx.begin(), idx.end(), int64_t{0});
        auto nth = idx.begin() + (R - nans - 1) / 2;
        // Ordered by value, NaN last, equal values by position: the stable rank, as torch.
        std::nth_element(idx.begin(), nth, idx.end(), [&](int64_t i, int64_t j) {
          const V a = at(i), c = at(j);
          if (math::isnan(a) || math::isnan(c)) return !math::isnan(a) || (math::isnan(c) && i < j);
          return a < c || (a == c && i < j);
        });
        pick = *nth;
      }
      values[k] = p[pick * inner];
      indices[k] = pick;
    }
  });
}

void median_cpu(const void* in, void* values, int64_t* indices, int64_t outer, int64_t R, int64_t inner, ScalarType t,
                bool ignore_nan) {
  dispatch_all(t, ignore_nan ? "nanmedian" : "median", [&]<class T>() {
    median_kernel(static_cast<const T*>(in), static_cast<T*>(values), indices, outer, R, inner, ignore_nan);
  });
}

}  // namespace

GR_REGISTER_KERNEL(median_stub, kCPU, &median_cpu);

std::pair<Tensor, Tensor> median(const Tensor& x, int64_t dim, bool keepdim, bool ignore_nan) {
  const char* op = ignore_nan ? "nanmedian" : "median";
  GR_CHECK(x.defined(), op, ": undefined tensor argument");
  const int64_t d = wrap_dim(dim, x.dim(), op);
  GR_CHECK(x.dim() == 0 || x.size(d) > 0, op, "(): Expected reduction dim ", d, " to have non-zero size (input ",
           x.sizes(), ")");
  std::vector<bool> mask(static_cast<size_t>(x.dim()), false);
  if (x.dim() > 0) mask[d] = true;
  std::vector<int64_t> shape = reduced_shape(x.sizes(), mask, keepdim);
  Tensor values = empty(shape, x.options()), indices = empty(shape, TensorOptions(kInt64).device(x.device()));
  if (values.numel() == 0) return {values, indices};
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < d; ++i) outer *= x.size(i);
  for (int64_t i = d + 1; i < x.dim(); ++i) inner *= x.size(i);
  Tensor c = contiguous(x);
  median_stub(x.device(), c.data_ptr(), values.data_ptr(), indices.data_ptr<int64_t>(), outer,
              x.dim() ? x.size(d) : 1, inner, x.scalar_type(), ignore_nan);
  return {values, indices};
}

Tensor median(const Tensor& x, bool ignore_nan) {
  GR_CHECK(x.defined(), ignore_nan ? "nanmedian" : "median", ": undefined tensor argument");
  if (x.numel() == 0) return full({}, NAN, x.options());
  Tensor c = contiguous(x);
  return median(make_view(c, {c.numel()}, {1}, c.storage_offset()), 0, false, ignore_nan).first;
}

}  // namespace gr::native
