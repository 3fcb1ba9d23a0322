// CPU walkers for the indexing kernels: for_each_run visits the inner runs of a StridedLoop in
// parallel chunks (the pointer-level twin of cpu_map), and check_index validates one index.
// Included by CPU kernel files only.
#pragma once

#include <algorithm>
#include <array>
#include <vector>

#include "core/native/index_ops.h"
#include "core/parallel.h"

namespace gr::native {

// The position an index addresses on its axis; throws IndexOutOfRange (Note [Index errors]).
template <class I>
inline int64_t check_index(I raw, const IndexAxis& axis) {
  int64_t i = static_cast<int64_t>(raw);
  if (axis.wrap && i < 0) i += axis.size;
  if (static_cast<uint64_t>(i) >= static_cast<uint64_t>(axis.size)) [[unlikely]]
    throw IndexOutOfRange{static_cast<int64_t>(raw)};
  return i;
}

// Calls fn(p, s, n) for runs of n elements along the loop's innermost dim: p[k] points at
// operand k's first element of the run, s[k] is its step in bytes. sizes[k] is operand k's
// element size. Chunks of at least `grain` elements go to different threads unless `serial`.
template <int K, class F>
void for_each_run(const StridedLoop& L, const std::array<int64_t, K>& sizes, int64_t grain, bool serial, const F& fn) {
  if (L.numel == 0) return;
  const int nd = L.ndim();
  if (nd == 0) {  // one element
    char* p[K];
    int64_t s[K] = {};
    for (int k = 0; k < K; ++k) p[k] = L.data[k];
    fn(p, s, int64_t{1});
    return;
  }
  int64_t inner_step[K];
  for (int k = 0; k < K; ++k) inner_step[k] = L.strides[k][nd - 1] * sizes[k];
  auto chunk = [&](int64_t begin, int64_t end) {
    std::vector<int64_t> idx(nd);
    int64_t rem = begin;
    for (int d = nd - 1; d >= 0; --d) {
      idx[d] = rem % L.shape[d];
      rem /= L.shape[d];
    }
    const int64_t inner = L.shape[nd - 1];
    for (int64_t i = begin; i < end;) {
      char* p[K];
      for (int k = 0; k < K; ++k) {
        int64_t off = 0;
        for (int d = 0; d < nd; ++d) off += idx[d] * L.strides[k][d];
        p[k] = L.data[k] + off * sizes[k];
      }
      const int64_t n = std::min(inner - idx[nd - 1], end - i);
      fn(p, inner_step, n);
      i += n;
      idx[nd - 1] += n;
      for (int d = nd - 1; d > 0 && idx[d] == L.shape[d]; --d) {
        idx[d] = 0;
        ++idx[d - 1];
      }
    }
  };
  if (serial) chunk(0, L.numel);
  else parallel_for(0, L.numel, std::max<int64_t>(grain, 1), chunk);
}

}  // namespace gr::native
