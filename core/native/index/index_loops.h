// CPU walkers for the indexing kernels: for_each_run visits the inner runs of a StridedLoop in
// parallel chunks (the pointer-level twin of cpu_map), and check_index validates one index.
// Included by CPU kernel files only.
#pragma once

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "core/native/index/index_ops.h"
#include "core/parallel.h"

#if defined(__AVX__)
#include <immintrin.h>
#endif

namespace gr::native {

// Note [Row copies]
// glibc 2.36 copies 4 KB and more with REP MOVSB, which Zen 3 runs about 10% slower than a loop
// of 32-byte loads and stores when the rows come from random places: index_select's 2048 rows
// of 4 KB took 0.38 ms by memcpy, 0.34 ms by the loop (glibc 2.39 stopped preferring REP MOVSB
// on AMD, its bug 30994). Rows of 1 MB and more keep memcpy, which streams them past the cache.
inline void copy_row(char* dst, const char* src, size_t n) {
#if defined(__AVX__)
  if (n >= 4096 && n < (size_t{1} << 20)) {
    size_t i = 0;
    for (; i + 128 <= n; i += 128) {
      const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i));
      const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i + 32));
      const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i + 64));
      const __m256i d = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i + 96));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), a);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i + 32), b);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i + 64), c);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i + 96), d);
    }
    std::memcpy(dst + i, src + i, n - i);
    return;
  }
#endif
  std::memcpy(dst, src, n);
}

// Note [Prefetching rows]
// A gather or scatter along a row reads (or adds into) its elements in random order, which the
// hardware prefetcher does not follow: each read of a line not yet in cache waits on memory.
// When the reads will touch most of the next row's lines (reads >= lines / 4) it is cheaper to
// prefetch that whole row while this one is worked on. Over [4096, 1024] float with 256
// indices a row, 1 thread: gather 3.1 -> 1.6 ms, in-place scatter_add_ 3.8 -> 2.0 ms (load 4).
// The caller knows where the next row is (scatter) or assumes rows lie one after another
// (gather, which sees one row at a time). Prefetching the next tile of scatter's out-of-place
// copy (Note [Scatter out of place]) made it slower.
// The row's size is checked before its byte count (or the next row's address) is formed: an
// axis may be as long as int64 allows (an empty tensor's), and INT64_MAX * sizeof(T) overflows.
inline bool worth_prefetching_row(int64_t elements, int64_t element_size, int64_t reads) {
  constexpr int64_t kMaxBytes = int64_t{64} << 10;
  if (elements > kMaxBytes / element_size) return false;
  return reads >= (elements * element_size + 255) / 256;  // reads >= lines / 4, lines of 64 bytes
}
inline void prefetch_row(const char* row, int64_t bytes) {
  for (int64_t b = 0; b < bytes; b += 64) __builtin_prefetch(row + b);
}

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
// Whole rows are visited in blocks by one tight loop (Note [Row blocks]).
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
  int64_t inner_step[K], outer_step[K] = {};
  for (int k = 0; k < K; ++k) {
    inner_step[k] = L.strides[k][nd - 1] * sizes[k];
    if (nd > 1) outer_step[k] = L.strides[k][nd - 2] * sizes[k];
  }
  const int64_t inner = L.shape[nd - 1], rows = nd > 1 ? L.shape[nd - 2] : 1;
  // Note [Row blocks]: the rows of one block differ only in the second innermost index, so
  // their pointers advance by one outer step; walking them in a loop of its own (rather than
  // recomputing each row's pointers from its index) keeps the next row's addresses ready
  // while the current one is copied: index_select of 8192 1 KB rows took 0.74 ms the other
  // way, 0.45 ms this way.
  auto chunk = [&](int64_t begin, int64_t end) {
    std::vector<int64_t> idx(nd);
    for (int64_t i = begin; i < end;) {
      int64_t rem = i;
      for (int d = nd - 1; d >= 0; --d) {
        idx[d] = rem % L.shape[d];
        rem /= L.shape[d];
      }
      char* p[K];
      for (int k = 0; k < K; ++k) {
        int64_t off = 0;
        for (int d = 0; d < nd; ++d) off += idx[d] * L.strides[k][d];
        p[k] = L.data[k] + off * sizes[k];
      }
      const int64_t col = idx[nd - 1];
      if (col != 0 || end - i < inner) {  // a partial row
        const int64_t n = std::min(inner - col, end - i);
        fn(p, inner_step, n);
        i += n;
        continue;
      }
      const int64_t block = std::min(rows - (nd > 1 ? idx[nd - 2] : 0), (end - i) / inner);
      for (int64_t r = 0; r < block; ++r) {
        char* q[K];
        for (int k = 0; k < K; ++k) q[k] = p[k] + r * outer_step[k];
        fn(q, inner_step, inner);
      }
      i += block * inner;
    }
  };
  if (serial) chunk(0, L.numel);
  else parallel_for(0, L.numel, std::max<int64_t>(grain, 1), chunk);
}

}  // namespace gr::native
