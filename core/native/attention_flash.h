// The FlashAttention-2 schedule the CPU kernel (attention_cpu.cpp) and the CUDA kernels
// (cuda_kernels/attention_*.cu) both follow, written once as GR_HOST_DEVICE functions: which
// key tiles a query tile visits (and the reverse), which tiles need per-element masking, the
// online softmax's update across tiles, and the dropout flags of adjacent weights. Tile sizes
// are each kernel's own; these functions take them as arguments. See core/native/attention.h.
#pragma once

#include <cstdint>

#include "core/native/attention.h"

namespace gr::native {

// Keys [0, end) that a block of queries [i0, i0 + nr) can see: all S, or (causal, key j
// visible to query i when j <= i) those up to its last query.
GR_HOST_DEVICE GR_INLINE int64_t attention_key_end(const AttentionParams& p, int64_t i0, int64_t nr) {
  return p.causal && i0 + nr < p.S ? i0 + nr : p.S;
}

// The first query that can see a key of a block starting at j0 (the backward's first query
// of a key block): 0, or (causal) j0 itself, capped at L.
GR_HOST_DEVICE GR_INLINE int64_t attention_query_begin(const AttentionParams& p, int64_t j0) {
  return p.causal ? (j0 < p.L ? j0 : p.L) : 0;
}

// Whether a tile of queries from i0 and w columns from key j0, of which the first nc are
// keys to visit, needs per-element masking: a mask is given, some columns are padding
// (nc < w), or (causal) some key lies beyond the tile's first query. A tile that does not is
// computed without looking at its elements' positions.
GR_HOST_DEVICE GR_INLINE bool attention_tile_masked(const AttentionParams& p, int64_t i0, int64_t j0, int64_t nc,
                                                    int64_t w) {
  return p.mask != AttentionMask::None || nc < w || (p.causal && j0 + nc - 1 > i0);
}

// Note [Online softmax]
// A query row meets its keys a tile at a time. It keeps the running max m of its scores and
// the sum l of exp(x - m) over the keys seen so far. A new tile with largest score mt moves
// the max to m' = max(m, mt); the tile's weights are exp(x - m') and what was summed before
// (l, and the output row, a weighted sum of value rows) is rescaled by alpha = exp(m - m').
// While every key seen is masked, m' is -inf: the tile's weights are all 0 and nothing
// changes (exp(-inf - -inf) would be NaN). At the end out = o / l and lse = m + log(l), or
// -inf with out = 0 for a row that saw no visible key. The CUDA kernels split a row's sum
// over the 4 (tensor cores) or 8 (float32) threads that hold its columns: each keeps its
// part of l (alpha is the same for all), added up once at the end. `exp` is the kernel's:
// fast_exp on the CPU (vectorised), the multi-function unit's __expf on the GPU.
template <class T>
struct OnlineSoftmax {
  T m = attention_neg_inf<T>(), l = T(0);
  // The running max once a tile whose largest score is tile_max is folded in.
  GR_HOST_DEVICE T next_max(T tile_max) const { return m < tile_max ? tile_max : m; }
  // Folds in a tile's weights exp(x - m_new), summed to `sum`, for a finite m_new = next_max(.);
  // returns alpha, the factor for the row's output so far.
  template <class Exp>
  GR_HOST_DEVICE T advance(T m_new, T sum, Exp exp) {
    const T alpha = exp(m - m_new);
    l = l * alpha + sum;
    m = m_new;
    return alpha;
  }
  GR_HOST_DEVICE T lse() const { return attention_lse(m, l); }
  // 1 / l, the output row's last factor (0 for a row without visible keys).
  GR_HOST_DEVICE T inv_sum() const { return l > T(0) ? T(1) / l : T(0); }
};

// Note [Attention dropout pairs]
// The dropout flags of one query row in key order come from consecutive Philox blocks, four
// weights a block (Note [Attention dropout stream]). AttentionDropoutRow keeps the last block
// drawn, so a walk along a row (the CPU kernel's, a whole tile row) or over a thread's pairs of
// adjacent keys (the CUDA kernels') draws each block once, or at most twice for a pair that
// straddles two blocks. The flags are integer comparisons: both devices drop the same weights.
struct AttentionDropoutRow {
  uint64_t seed, offset, first;  // first: the flat index of weight (b, i, 0)
  uint32_t threshold;
  uint64_t block = ~uint64_t(0);
  uint32_t r[4] = {0, 0, 0, 0};
  GR_HOST_DEVICE AttentionDropoutRow(const AttentionParams& p, int64_t b, int64_t i)
      : seed(p.seed), offset(p.offset), first(static_cast<uint64_t>((b * p.L + i) * p.S)),
        threshold(p.dropout_threshold) {}
  // Whether weight (b, i, j) is kept.
  GR_HOST_DEVICE bool keep(int64_t j) {
    const uint64_t n = first + static_cast<uint64_t>(j);
    if (n / 4 != block) {
      block = n / 4;
      Philox4x32(seed, 0, offset + block).next(r);
    }
    const uint32_t k = n % 4;  // selects, not an indexed load: r stays in registers on the GPU
    return dropout_keep(k == 0 ? r[0] : k == 1 ? r[1] : k == 2 ? r[2] : r[3], threshold);
  }
  // Its factor: 0, or the scale 1 / (1 - p).
  template <class T>
  GR_HOST_DEVICE T factor(int64_t j, T scale) {
    return keep(j) ? scale : T(0);
  }
};

}  // namespace gr::native
