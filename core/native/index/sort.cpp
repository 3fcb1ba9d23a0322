// sort and topk: the slices along dim become contiguous rows (sort.h), and the CPU kernels,
// which follow torch's CPU algorithms so that ties come out in torch's order.
#include "core/native/index/sort.h"

#include <algorithm>
#include <vector>

#include "core/factory.h"
#include "core/functors.h"
#include "core/native/copy/copy.h"
#include "core/native/shape/shape.h"
#include "core/parallel.h"

namespace gr::native {

GR_DEFINE_DISPATCH(SortFn, sort_stub);
GR_DEFINE_DISPATCH(TopkFn, topk_stub);

namespace {

// float for bfloat16/float16 (compared as floats), else T.
template <class T>
using compare_t = std::conditional_t<std::is_same_v<T, BFloat16> || std::is_same_v<T, Half>, float, T>;

// NaN is the largest value: first when descending, last when ascending.
template <class V>
struct Ascending {
  template <class P>
  bool operator()(const P& a, const P& b) const {
    return (!math::isnan(V(a.first)) && math::isnan(V(b.first))) || V(a.first) < V(b.first);
  }
};
template <class V>
struct Descending {
  template <class P>
  bool operator()(const P& a, const P& b) const {
    return (math::isnan(V(a.first)) && !math::isnan(V(b.first))) || V(a.first) > V(b.first);
  }
};

template <class T, class Cmp>
void sort_rows(const Tensor& values, const Tensor& indices, bool stable, Cmp cmp) {
  const int64_t rows = values.numel() == 0 ? 0 : values.size(0), n = values.size(1);
  T* v = values.data_ptr<T>();
  int64_t* ix = indices.data_ptr<int64_t>();
  parallel_for(0, rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n, 1)), [&](int64_t begin, int64_t end) {
    std::vector<std::pair<T, int64_t>> row(n);
    for (int64_t r = begin; r < end; ++r) {
      for (int64_t j = 0; j < n; ++j) row[j] = {v[r * n + j], j};
      if (stable) std::stable_sort(row.begin(), row.end(), cmp);
      else std::sort(row.begin(), row.end(), cmp);
      for (int64_t j = 0; j < n; ++j) v[r * n + j] = row[j].first, ix[r * n + j] = row[j].second;
    }
  });
}

void sort_cpu(const Tensor& values, const Tensor& indices, bool descending, bool stable) {
  dispatch_all(values.scalar_type(), "sort", [&]<class T>() {
    using V = compare_t<T>;
    if (descending) sort_rows<T>(values, indices, stable, Descending<V>{});
    else sort_rows<T>(values, indices, stable, Ascending<V>{});
  });
}

// torch's topk_impl_loop (ATen/native/TopKImpl.h): the same algorithm on the same queue.
template <class T, class Cmp>
void topk_rows(const Tensor& src, const Tensor& values, const Tensor& indices, int64_t k, bool sorted, Cmp cmp) {
  using V = compare_t<T>;
  const int64_t rows = src.numel() == 0 ? 0 : src.size(0), n = src.size(1);
  if (k == 0) return;
  const T* s = src.data_ptr<T>();
  T* v = values.data_ptr<T>();
  int64_t* ix = indices.data_ptr<int64_t>();
  parallel_for(0, rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n, 1)), [&](int64_t begin, int64_t end) {
    std::vector<std::pair<V, int64_t>> queue(n);
    for (int64_t r = begin; r < end; ++r) {
      for (int64_t j = 0; j < n; ++j) queue[j] = {static_cast<V>(s[r * n + j]), j};
      if (k * 64 <= n) {
        std::partial_sort(queue.begin(), queue.begin() + k, queue.end(), cmp);
      } else {
        std::nth_element(queue.begin(), queue.begin() + k - 1, queue.end(), cmp);
        if (sorted) std::sort(queue.begin(), queue.begin() + k - 1, cmp);
      }
      for (int64_t j = 0; j < k; ++j) v[r * k + j] = static_cast<T>(queue[j].first), ix[r * k + j] = queue[j].second;
    }
  });
}

void topk_cpu(const Tensor& src, const Tensor& values, const Tensor& indices, int64_t k, bool largest, bool sorted) {
  dispatch_all(src.scalar_type(), "topk", [&]<class T>() {
    using V = compare_t<T>;
    if (largest) topk_rows<T>(src, values, indices, k, sorted, Descending<V>{});
    else topk_rows<T>(src, values, indices, k, sorted, Ascending<V>{});
  });
}

// self with dim moved last, as contiguous rows [rows, n] (a copy the kernel may overwrite).
Tensor as_rows(const Tensor& self, int64_t d) {
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < self.dim(); ++i)
    if (i != d) perm.push_back(i);
  perm.push_back(d);
  Tensor moved = self.dim() == 0 ? self : permute(self, perm);
  const int64_t n = self.dim() == 0 ? 1 : self.size(d);
  return reshape(clone(moved), {n == 0 ? 0 : self.numel() / n, n});
}

// Rows [rows, m] back to self's layout with dim of size m.
Tensor from_rows(const Tensor& rows, const Tensor& self, int64_t d, int64_t m) {
  if (self.dim() == 0) return reshape(rows, {});
  std::vector<int64_t> moved_sizes;
  for (int64_t i = 0; i < self.dim(); ++i)
    if (i != d) moved_sizes.push_back(self.size(i));
  moved_sizes.push_back(m);
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < self.dim(); ++i)
    if (i != d) perm.push_back(i);
  perm.push_back(d);
  return contiguous(permute(reshape(rows, moved_sizes), inverse_permutation(perm)));
}

}  // namespace

GR_REGISTER_KERNEL(sort_stub, kCPU, &sort_cpu);
GR_REGISTER_KERNEL(topk_stub, kCPU, &topk_cpu);

std::pair<Tensor, Tensor> sort(const Tensor& self, int64_t dim, bool descending, bool stable) {
  GR_CHECK(self.defined(), "sort: undefined tensor argument");
  const int64_t d = wrap_dim(dim, self.dim(), "sort");
  Tensor values = as_rows(self, d);
  Tensor indices = empty(values.sizes(), TensorOptions(kInt64).device(self.device()));
  if (values.numel() > 0) sort_stub(self.device(), values, indices, descending, stable);
  const int64_t n = values.size(1);
  return {from_rows(values, self, d, n), from_rows(indices, self, d, n)};
}

std::pair<Tensor, Tensor> topk(const Tensor& self, int64_t k, int64_t dim, bool largest, bool sorted) {
  GR_CHECK(self.defined(), "topk: undefined tensor argument");
  const int64_t d = wrap_dim(dim, self.dim(), "topk");
  const int64_t n = self.dim() == 0 ? 1 : self.size(d);
  GR_CHECK(k >= 0 && k <= n, "topk: selected index k (", k, ") out of range for dimension ", d, " of size ", n,
           " (self ", self.sizes(), ")");
  Tensor rows = as_rows(self, d);
  Tensor values = empty({rows.size(0), k}, self.options());
  Tensor indices = empty({rows.size(0), k}, TensorOptions(kInt64).device(self.device()));
  if (values.numel() > 0) topk_stub(self.device(), rows, values, indices, k, largest, sorted);
  return {from_rows(values, self, d, k), from_rows(indices, self, d, k)};
}

}  // namespace gr::native
