// CPU element-wise loops over a StridedLoop: cpu_map<Out, In...>(loop, f) writes
// f(in...) to every output element, in parallel chunks, with vectorisable inner loops
// for contiguous and scalar-broadcast operands. Included by CPU kernel files only.
#pragma once

#include <utility>

#include "core/native/elementwise/bool_bytes.h"
#include "core/native/elementwise/strided_loop.h"
#include "core/parallel.h"

namespace gr::native {

namespace detail {

// Element j of input I; inputs whose bit is set in Mask are broadcast scalars (stride 0),
// which the compiler then hoists out of the loop. Bools are read as bytes: See Note [Bools
// read as bytes].
template <int Mask, size_t I, class In>
inline In load_contig(char* const* p, int64_t j) {
  if constexpr ((Mask >> I) & 1) return load_stored<In>(p[I + 1], 0);
  else return load_stored<In>(p[I + 1], j);
}

// f is copied first: the stores to out could alias the caller's f, whose members (a fill
// value, a scale) GCC then reloaded each element, and left masked_fill's select a branch
// (18 ms over [4096, 1024] floats with a random mask).
template <int Mask, class Out, class... In, class F, size_t... I>
inline void inner_contig(char* const* p, int64_t n, const F& f_in, std::index_sequence<I...>) {
  const F f = f_in;
  Out* out = reinterpret_cast<Out*>(p[0]);
  for (int64_t j = 0; j < n; ++j) out[j] = f(load_contig<Mask, I, In>(p, j)...);
}

template <class Out, class... In, class F, size_t... I>
inline void inner_strided(char* const* p, const int64_t* s, int64_t n, const F& f, std::index_sequence<I...>) {
  Out* out = reinterpret_cast<Out*>(p[0]);
  for (int64_t j = 0; j < n; ++j)
    out[j * s[0]] = f(load_stored<In>(p[I + 1], j * s[I + 1])...);
}

// One inner run of n elements; p are the operands' current pointers, s their inner strides.
template <class Out, class... In, class F>
inline void inner_loop(char* const* p, const int64_t* s, int64_t n, const F& f) {
  constexpr int N = sizeof...(In);
  using Seq = std::index_sequence_for<In...>;
  if (s[0] == 1) {
    int mask = 0;
    bool simple = true;
    for (int i = 0; i < N; ++i) {
      if (s[i + 1] == 0) mask |= 1 << i;
      else if (s[i + 1] != 1) simple = false;
    }
    if (simple) {
      if (mask == 0) return inner_contig<0, Out, In...>(p, n, f, Seq{});
      if constexpr (N == 1) {
        if (mask == 1) return inner_contig<1, Out, In...>(p, n, f, Seq{});
      } else if constexpr (N == 2) {
        if (mask == 1) return inner_contig<1, Out, In...>(p, n, f, Seq{});
        if (mask == 2) return inner_contig<2, Out, In...>(p, n, f, Seq{});
      } else if constexpr (N == 3) {  // where with a number, lerp and clamp with 0-d tensors
        if (mask == 2) return inner_contig<2, Out, In...>(p, n, f, Seq{});
        if (mask == 4) return inner_contig<4, Out, In...>(p, n, f, Seq{});
        if (mask == 6) return inner_contig<6, Out, In...>(p, n, f, Seq{});
      }
    }
  }
  inner_strided<Out, In...>(p, s, n, f, Seq{});
}

}  // namespace detail

template <class Out, class... In, class F>
void cpu_map(const StridedLoop& L, const F& f) {
  constexpr int K = 1 + sizeof...(In);
  if (L.numel == 0) return;
  const int nd = L.ndim();
  if (nd == 0) {  // a 0-d result
    char* p[K];
    for (int o = 0; o < K; ++o) p[o] = L.data[o];
    int64_t zero[K] = {};
    detail::inner_loop<Out, In...>(p, zero, 1, f);
    return;
  }
  const int64_t inner = L.shape[nd - 1];
  parallel_for(0, L.numel, kGrainSize, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> idx(nd);
    int64_t rem = begin;
    for (int d = nd - 1; d >= 0; --d) {
      idx[d] = rem % L.shape[d];
      rem /= L.shape[d];
    }
    constexpr int64_t kSizes[K] = {sizeof(Out), sizeof(In)...};
    int64_t inner_stride[K];
    for (int o = 0; o < K; ++o) inner_stride[o] = L.strides[o][nd - 1];
    int64_t i = begin;
    while (i < end) {
      char* p[K];
      for (int o = 0; o < K; ++o) {
        int64_t off = 0;
        for (int d = 0; d < nd; ++d) off += idx[d] * L.strides[o][d];
        p[o] = L.data[o] + off * kSizes[o];
      }
      int64_t n = std::min(inner - idx[nd - 1], end - i);
      detail::inner_loop<Out, In...>(p, inner_stride, n, f);
      i += n;
      idx[nd - 1] += n;
      for (int d = nd - 1; d > 0 && idx[d] == L.shape[d]; --d) {
        idx[d] = 0;
        ++idx[d - 1];
      }
    }
  });
}

// Fills every output element with f() (no inputs).
template <class Out, class F>
void cpu_fill(const StridedLoop& L, const F& f) {
  cpu_map<Out>(L, f);
}

}  // namespace gr::native
