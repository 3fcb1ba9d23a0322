// Packed GEMM (see gemm_packed.h). Loop nest, in row-major terms (BLIS's, transposed):
//   rows of A in blocks of MB (packed A block stays in L3)
//     K in blocks of KC: pack A[MB x KC] into MR-row micro-panels
//       columns of B in blocks of NB: pack B[KC x NB] into NR-column micro-panels (L2)
//         each MR-row panel (L1) against every NR-column panel: the micro-kernel
// The micro-kernel keeps an MR x NR tile of C in vector registers, broadcasting one A value
// per row and loading NR/L vectors of B per k; each product picks the tile shape (12 x 32 or
// 8 x 48 floats on AVX-512) that wastes least on partial tiles. Edge tiles run on a buffer.
// Two entry points skip packing for callers whose operands are already suitable:
// panel_gemm (A in panels, B read in place) and gemm_nt (A's rows read in place).
#include "core/native/gemm_packed.h"

#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#define GR_PACKED_GEMM 1
#endif

namespace gr::native {

#if GR_PACKED_GEMM
namespace {

// ---- vector ops: one struct per (type, ISA) ----
#if defined(__AVX512F__)
struct VecF {
  using T = float;
  using V = __m512;
  static constexpr int L = 16;
  static V load(const T* p) { return _mm512_loadu_ps(p); }
  static void store(T* p, V v) { _mm512_storeu_ps(p, v); }
  static V set1(T x) { return _mm512_set1_ps(x); }
  static V zero() { return _mm512_setzero_ps(); }
  static V fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
};
struct VecD {
  using T = double;
  using V = __m512d;
  static constexpr int L = 8;
  static V load(const T* p) { return _mm512_loadu_pd(p); }
  static void store(T* p, V v) { _mm512_storeu_pd(p, v); }
  static V set1(T x) { return _mm512_set1_pd(x); }
  static V zero() { return _mm512_setzero_pd(); }
  static V fma(V a, V b, V c) { return _mm512_fmadd_pd(a, b, c); }
  static V mul(V a, V b) { return _mm512_mul_pd(a, b); }
  static V add(V a, V b) { return _mm512_add_pd(a, b); }
};
// Two register tiles fit the 32 vector registers: 12 rows x 2 vectors ("tall") and 8 rows
// x 3 vectors ("wide") of accumulators, plus the B vectors and a broadcast.
constexpr int kTallMR = 12, kTallNV = 2, kWideMR = 8, kWideNV = 3;
#else
struct VecF {
  using T = float;
  using V = __m256;
  static constexpr int L = 8;
  static V load(const T* p) { return _mm256_loadu_ps(p); }
  static void store(T* p, V v) { _mm256_storeu_ps(p, v); }
  static V set1(T x) { return _mm256_set1_ps(x); }
  static V zero() { return _mm256_setzero_ps(); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
};
struct VecD {
  using T = double;
  using V = __m256d;
  static constexpr int L = 4;
  static V load(const T* p) { return _mm256_loadu_pd(p); }
  static void store(T* p, V v) { _mm256_storeu_pd(p, v); }
  static V set1(T x) { return _mm256_set1_pd(x); }
  static V zero() { return _mm256_setzero_pd(); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_pd(a, b, c); }
  static V mul(V a, V b) { return _mm256_mul_pd(a, b); }
  static V add(V a, V b) { return _mm256_add_pd(a, b); }
};
// 16 vector registers: 6 x 2 accumulators + 2 B vectors + 1 broadcast (one tile shape).
constexpr int kTallMR = 6, kTallNV = 2, kWideMR = 6, kWideNV = 2;
#endif

template <class T>
struct VecOf;
template <>
struct VecOf<float> {
  using S = VecF;
};
template <>
struct VecOf<double> {
  using S = VecD;
};

// One register-tile shape (MR rows x NV vectors) and the cache blocking that goes with it:
// KC x NR panels of B stream from L2 (B block ~1 MiB), MR x KC panels of A stay in L1.
template <class T, int MR_, int NV_>
struct Tile {
  using S = typename VecOf<T>::S;
  static constexpr int MR = MR_, NV = NV_, NR = NV_ * S::L;
  static constexpr int64_t KC = sizeof(T) == 4 ? 384 : 256;
  static constexpr int64_t NB = (int64_t(1) << 20) / (KC * int64_t(sizeof(T))) / NR * NR;
  static constexpr int64_t MB = (sizeof(T) == 4 ? 3072 : 1536) / MR * MR;
};

// c[MR x NR] (row stride ldc) = alpha * a-panel x b-panel + beta * c. a: kc x MR values,
// k-major as packed below; b: kc rows of NR values, ldb apart (NR when packed).
template <class Tl, class T>
void micro_kernel(int64_t kc, const T* __restrict a, const T* __restrict b, int64_t ldb, T* __restrict c, int64_t ldc,
                  T alpha, T beta) {
  using S = typename Tl::S;
  using V = typename S::V;
  constexpr int MR = Tl::MR, NV = Tl::NV, L = S::L;
  V acc[MR][NV];
#pragma GCC unroll 32
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[r][v] = S::zero();
#pragma GCC unroll 2
  for (int64_t k = 0; k < kc; ++k) {
    V bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) bv[v] = S::load(b + v * L);
#pragma GCC unroll 32
    for (int r = 0; r < MR; ++r) {
      V av = S::set1(a[r]);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[r][v] = S::fma(av, bv[v], acc[r][v]);
    }
    a += MR;
    b += ldb;
  }
  if (alpha != T(1)) {
    V va = S::set1(alpha);
#pragma GCC unroll 32
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[r][v] = S::mul(va, acc[r][v]);
  }
  if (beta == T(0)) {
#pragma GCC unroll 32
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) S::store(c + r * ldc + v * L, acc[r][v]);
  } else if (beta == T(1)) {
#pragma GCC unroll 32
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) S::store(c + r * ldc + v * L, S::add(S::load(c + r * ldc + v * L), acc[r][v]));
  } else {
    V vb = S::set1(beta);
#pragma GCC unroll 32
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) S::store(c + r * ldc + v * L, S::fma(vb, S::load(c + r * ldc + v * L), acc[r][v]));
  }
}

// A partial tile (mr <= MR rows, nr <= NR columns): full kernel into a buffer, then merge.
template <class Tl, class T>
void edge_kernel(int64_t kc, const T* a, const T* b, int64_t ldb, T* c, int64_t ldc, int64_t mr, int64_t nr, T alpha,
                 T beta) {
  constexpr int MR = Tl::MR, NR = Tl::NR;
  alignas(64) T tmp[MR * NR];
  micro_kernel<Tl>(kc, a, b, ldb, tmp, NR, alpha, T(0));
  for (int64_t r = 0; r < mr; ++r)
    for (int64_t j = 0; j < nr; ++j)
      c[r * ldc + j] = beta == T(0) ? tmp[r * NR + j] : tmp[r * NR + j] + beta * c[r * ldc + j];
}

// ---- in-register transposes for packing lines that run along k ----
// Each writes d[k * ds + r] = s[r * rs + k] for an 8x8 / 4x4 block.
inline void transpose8x8(float* d, int64_t ds, const float* s, int64_t rs) {
  __m256 r[8], t[8], u[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(s + i * rs);
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    u[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
    u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
    u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
  }
  for (int i = 0; i < 4; ++i) {
    _mm256_storeu_ps(d + i * ds, _mm256_permute2f128_ps(u[i], u[i + 4], 0x20));
    _mm256_storeu_ps(d + (i + 4) * ds, _mm256_permute2f128_ps(u[i], u[i + 4], 0x31));
  }
}
inline void transpose4x4(double* d, int64_t ds, const double* s, int64_t rs) {
  __m256d r0 = _mm256_loadu_pd(s), r1 = _mm256_loadu_pd(s + rs), r2 = _mm256_loadu_pd(s + 2 * rs),
          r3 = _mm256_loadu_pd(s + 3 * rs);
  __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1), t2 = _mm256_unpacklo_pd(r2, r3),
          t3 = _mm256_unpackhi_pd(r2, r3);
  _mm256_storeu_pd(d, _mm256_permute2f128_pd(t0, t2, 0x20));
  _mm256_storeu_pd(d + ds, _mm256_permute2f128_pd(t1, t3, 0x20));
  _mm256_storeu_pd(d + 2 * ds, _mm256_permute2f128_pd(t0, t2, 0x31));
  _mm256_storeu_pd(d + 3 * ds, _mm256_permute2f128_pd(t1, t3, 0x31));
}
inline void transpose4x4(float* d, int64_t ds, const float* s, int64_t rs) {
  __m128 r0 = _mm_loadu_ps(s), r1 = _mm_loadu_ps(s + rs), r2 = _mm_loadu_ps(s + 2 * rs), r3 = _mm_loadu_ps(s + 3 * rs);
  _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
  _mm_storeu_ps(d, r0);
  _mm_storeu_ps(d + ds, r1);
  _mm_storeu_ps(d + 2 * ds, r2);
  _mm_storeu_ps(d + 3 * ds, r3);
}
template <int G>
void transpose_tile(float* d, int64_t ds, const float* s, int64_t rs) {
  if constexpr (G == 8) transpose8x8(d, ds, s, rs);
  else transpose4x4(d, ds, s, rs);
}
template <int G>
void transpose_tile(double* d, int64_t ds, const double* s, int64_t rs) {
  transpose4x4(d, ds, s, rs);
}
// Tile size: 8x8 for float when R allows, else 4x4.
template <class T, int R>
constexpr int kTile = sizeof(T) == 4 && R % 8 == 0 ? 8 : 4;

// Packs R lines (line r at s + r * rs, contiguous along k) into d[k * R + r] for the
// leading k that whole transpose tiles cover; returns how many k were done.
template <int R, class T>
int64_t transpose_lines(T* d, const T* s, int64_t rs, int64_t kc) {
  constexpr int G = kTile<T, R>;
  if constexpr (R % G != 0) {
    return 0;
  } else {
    const int64_t kend = kc / G * G;
    for (int64_t k = 0; k < kend; k += G)
      for (int g = 0; g < R; g += G) transpose_tile<G>(d + k * R + g, R, s + g * rs + k, rs);
    return kend;
  }
}

// Packs `width` lines of kc elements into panels of R lines: panel p holds lines
// [p*R, p*R+R) as dst[p*R*kc + k*R + r], zero-filled past `width`. Element (line r, k) is
// src[r * rs + k * ks].
template <class T, int R>
void pack_block(T* __restrict dst, const T* __restrict src, int64_t rs, int64_t ks, int64_t width, int64_t kc) {
  const int64_t full = width / R * R;
  if (rs == 1) {
    // Lines are contiguous: walk src row by row (k), scattering R-wide pieces to the panels,
    // so reads stream instead of striding across pages.
    for (int64_t k = 0; k < kc; ++k) {
      const T* s = src + k * ks;
      for (int64_t p = 0; p < full; p += R) std::memcpy(dst + p * kc + k * R, s + p, R * sizeof(T));
    }
  } else {
    for (int64_t p = 0; p < full; p += R) {
      T* d = dst + p * kc;
      const T* s = src + p * rs;
      int64_t k = 0;
      if (ks == 1) k = transpose_lines<R>(d, s, rs, kc);
      for (; k < kc; ++k)
        for (int r = 0; r < R; ++r) d[k * R + r] = s[r * rs + k * ks];
    }
  }
  if (full < width) {
    const int64_t rem = width - full;
    T* d = dst + full * kc;
    const T* s = src + full * rs;
    for (int64_t k = 0; k < kc; ++k) {
      for (int64_t r = 0; r < rem; ++r) d[k * R + r] = s[r * rs + k * ks];
      for (int64_t r = rem; r < R; ++r) d[k * R + r] = T(0);
    }
  }
}

// Per-thread packing buffers, 64-byte aligned, grown on demand and kept for reuse.
template <class T>
T* scratch(int which, size_t elements) {
  struct Buf {
    std::unique_ptr<T[], decltype(&std::free)> p{nullptr, &std::free};
    size_t n = 0;
  };
  thread_local Buf bufs[2];
  Buf& b = bufs[which];
  if (b.n < elements) {
    size_t bytes = (elements * sizeof(T) + 63) / 64 * 64;
    b.p.reset(static_cast<T*>(std::aligned_alloc(64, bytes)));
    if (!b.p) throw std::bad_alloc();
    b.n = elements;
  }
  return b.p.get();
}

template <class Tr, class T>
void gemm_serial(bool ta, bool tb, int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t lda, const T* B,
                 int64_t ldb, T beta, T* C, int64_t ldc) {
  constexpr int MR = Tr::MR, NR = Tr::NR;
  // Strides of A(i, k) and B(k, j) along each index.
  const int64_t a_is = ta ? 1 : lda, a_ks = ta ? lda : 1;
  const int64_t b_js = tb ? ldb : 1, b_ks = tb ? 1 : ldb;
  // Equal-sized blocks (rounded up to whole micro-panels) instead of full blocks and a thin
  // remainder: a thin last block would reuse the packed panels too little.
  auto balanced = [](int64_t n, int64_t cap, int64_t unit) {
    const int64_t blocks = (n + cap - 1) / cap;
    return ((n + blocks - 1) / blocks + unit - 1) / unit * unit;
  };
  const int64_t MB = balanced(M, Tr::MB, MR), NB = balanced(N, Tr::NB, NR), KC = balanced(K, Tr::KC, 1);
  T* Ap = scratch<T>(0, static_cast<size_t>(MB * KC));
  T* Bp = scratch<T>(1, static_cast<size_t>(NB * KC));
  for (int64_t i0 = 0; i0 < M; i0 += MB) {
    const int64_t mb = std::min(MB, M - i0);
    for (int64_t p0 = 0; p0 < K; p0 += KC) {
      const int64_t kc = std::min(KC, K - p0);
      const T beta_k = p0 == 0 ? beta : T(1);
      pack_block<T, MR>(Ap, A + i0 * a_is + p0 * a_ks, a_is, a_ks, mb, kc);
      for (int64_t j0 = 0; j0 < N; j0 += NB) {
        const int64_t nb = std::min(NB, N - j0);
        pack_block<T, NR>(Bp, B + p0 * b_ks + j0 * b_js, b_js, b_ks, nb, kc);
        for (int64_t ir = 0; ir < mb; ir += MR) {
          const int64_t mr = std::min<int64_t>(MR, mb - ir);
          for (int64_t jr = 0; jr < nb; jr += NR) {
            const int64_t nr = std::min<int64_t>(NR, nb - jr);
            T* c = C + (i0 + ir) * ldc + j0 + jr;
            if (mr == MR && nr == NR) micro_kernel<Tr>(kc, Ap + ir * kc, Bp + jr * kc, NR, c, ldc, alpha, beta_k);
            else edge_kernel<Tr>(kc, Ap + ir * kc, Bp + jr * kc, NR, c, ldc, mr, nr, alpha, beta_k);
          }
        }
      }
    }
  }
}

// Threads split C into row or column stripes of whole micro-tiles; each packs its own
// operands. Splitting the longer side keeps stripes wide and duplicated packing small.
template <class Tl, class T>
void gemm_threads(bool ta, bool tb, int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t lda, const T* B,
                  int64_t ldb, T beta, T* C, int64_t ldc, int threads) {
  constexpr int MR = Tl::MR, NR = Tl::NR;
  const bool split_rows = M >= N;
  const int64_t units = split_rows ? (M + MR - 1) / MR : (N + NR - 1) / NR;
  const double flops = 2.0 * static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K);
  int64_t nt = omp_in_parallel() ? 1 : std::min<int64_t>({threads, units, static_cast<int64_t>(flops / 4e6) + 1});
  if (nt <= 1) {
    gemm_serial<Tl>(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    return;
  }
#pragma omp parallel num_threads(static_cast<int>(nt))
  {
    const int64_t t = omp_get_thread_num(), n = omp_get_num_threads();
    const int64_t u0 = units * t / n, u1 = units * (t + 1) / n;
    if (split_rows) {
      const int64_t m0 = u0 * MR, m1 = std::min(M, u1 * MR);
      if (m0 < m1)
        gemm_serial<Tl>(ta, tb, m1 - m0, N, K, alpha, A + (ta ? m0 : m0 * lda), lda, B, ldb, beta, C + m0 * ldc, ldc);
    } else {
      const int64_t n0 = u0 * NR, n1 = std::min(N, u1 * NR);
      if (n0 < n1)
        gemm_serial<Tl>(ta, tb, M, n1 - n0, K, alpha, A, lda, B + (tb ? n0 * ldb : n0), ldb, beta, C + n0, ldc);
    }
  }
}

}  // namespace

template <class T>
bool packed_gemm_available() {
  return true;
}

template <class T>
void packed_gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t lda, const T* B,
                 int64_t ldb, T beta, T* C, int64_t ldc, int threads) {
  if (M <= 0 || N <= 0) return;
  if (K <= 0 || alpha == T(0)) {
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) C[i * ldc + j] = beta == T(0) ? T(0) : beta * C[i * ldc + j];
    return;
  }
  // The tile shape that wastes least on partial tiles (12 x 32 unless 8 x 48 clearly wins,
  // as for the 64-row products of convolutions).
  using Tall = Tile<T, kTallMR, kTallNV>;
  using Wide = Tile<T, kWideMR, kWideNV>;
  auto padded = [&](int64_t mr, int64_t nr) {
    return static_cast<double>((M + mr - 1) / mr * mr) * static_cast<double>((N + nr - 1) / nr * nr);
  };
  if (padded(Wide::MR, Wide::NR) < 0.97 * padded(Tall::MR, Tall::NR))
    gemm_threads<Wide>(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, threads);
  else
    gemm_threads<Tall>(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, threads);
}

// c[8 x NR] (+)= a-rows x b-panel where row r of A is read in place at a + r * lda (one
// broadcast per row and k), so A needs no packing; b is a packed [kc][NR] panel.
template <class Tl, class T>
void rows_kernel(int64_t kc, const T* __restrict a, int64_t lda, const T* __restrict b, T* __restrict c, int64_t ldc,
                 bool accumulate) {
  using S = typename Tl::S;
  using V = typename S::V;
  constexpr int MR = 8, NV = Tl::NV, L = S::L;
  const T* ar[MR];
  for (int r = 0; r < MR; ++r) ar[r] = a + r * lda;
  V acc[MR][NV];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[r][v] = S::zero();
  for (int64_t k = 0; k < kc; ++k) {
    V bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) bv[v] = S::load(b + k * NV * L + v * L);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const V av = S::set1(ar[r][k]);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[r][v] = S::fma(av, bv[v], acc[r][v]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      S::store(c + r * ldc + v * L, accumulate ? S::add(S::load(c + r * ldc + v * L), acc[r][v]) : acc[r][v]);
}

template <class T>
void panel_gemm(int64_t M, int64_t N, int64_t K, const T* Ap, const T* B, int64_t ldb, T* C, int64_t ldc,
                bool accumulate) {
  using Tl = Tile<T, kWideMR, kWideNV>;
  static_assert(Tl::MR == kPanelMR<T> && Tl::NR == kPanelNR<T>, "panel layout must match the 8-row tile");
  constexpr int MR = Tl::MR, NR = Tl::NR;
  if (M <= 0 || N <= 0) return;
  const T beta = accumulate ? T(1) : T(0);
  if (K <= 0) {
    if (!accumulate)
      for (int64_t i = 0; i < M; ++i) std::fill(C + i * ldc, C + i * ldc + N, T(0));
    return;
  }
  // B is read in place, NR columns at a time (each K x NR slice stays in L1 while every A
  // panel passes over it); the last, partial slice is copied into a zero-padded panel.
  for (int64_t j = 0; j < N; j += NR) {
    const T* b = B + j;
    int64_t bs = ldb;
    if (j + NR > N) {
      T* pad = scratch<T>(1, static_cast<size_t>(K * NR));
      for (int64_t k = 0; k < K; ++k) {
        std::copy(B + k * ldb + j, B + k * ldb + N, pad + k * NR);
        std::fill(pad + k * NR + (N - j), pad + (k + 1) * NR, T(0));
      }
      b = pad, bs = NR;
    }
    for (int64_t i = 0; i < M; i += MR) {
      const T* a = Ap + (i / MR) * K * MR;
      if (i + MR <= M && j + NR <= N) micro_kernel<Tl>(K, a, b, bs, C + i * ldc + j, ldc, T(1), beta);
      else edge_kernel<Tl>(K, a, b, bs, C + i * ldc + j, ldc, std::min<int64_t>(MR, M - i), std::min<int64_t>(NR, N - j), T(1), beta);
    }
  }
}

template <class T>
void gemm_nt(int64_t M, int64_t N, int64_t K, const T* A, int64_t lda, const T* B, int64_t ldb, T* C, int64_t ldc,
             bool accumulate) {
  using Tl = Tile<T, kTallMR, kTallNV>;
  constexpr int NR = Tl::NR;
  if (M <= 0 || N <= 0) return;
  if (K <= 0 || M % 8 != 0) {  // (rows come in blocks of 8; other shapes take the general path)
    packed_gemm<T>(false, true, M, N, K, T(1), A, lda, B, ldb, accumulate ? T(1) : T(0), C, ldc, 1);
    return;
  }
  T* Bp = scratch<T>(1, static_cast<size_t>((N + NR - 1) / NR * NR * std::min<int64_t>(K, Tl::KC)));
  alignas(64) T tmp[8 * NR];
  for (int64_t p0 = 0; p0 < K; p0 += Tl::KC) {
    const int64_t kc = std::min<int64_t>(Tl::KC, K - p0);
    const bool acc = accumulate || p0 > 0;
    pack_block<T, NR>(Bp, B + p0, ldb, 1, N, kc);  // B^T(k, j) = B[j][k]: columns j are B's rows
    for (int64_t j = 0; j < N; j += NR) {
      const T* b = Bp + j * kc;
      const int64_t nr = std::min<int64_t>(NR, N - j);
      for (int64_t i = 0; i < M; i += 8) {
        if (nr == NR) {
          rows_kernel<Tl>(kc, A + i * lda + p0, lda, b, C + i * ldc + j, ldc, acc);
        } else {
          rows_kernel<Tl>(kc, A + i * lda + p0, lda, b, tmp, NR, false);
          for (int r = 0; r < 8; ++r)
            for (int64_t jj = 0; jj < nr; ++jj)
              C[(i + r) * ldc + j + jj] = acc ? C[(i + r) * ldc + j + jj] + tmp[r * NR + jj] : tmp[r * NR + jj];
        }
      }
    }
  }
}

#else  // no vector ISA: callers use Eigen

template <class T>
void gemm_nt(int64_t M, int64_t N, int64_t K, const T* A, int64_t lda, const T* B, int64_t ldb, T* C, int64_t ldc,
             bool accumulate) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      T acc = 0;
      for (int64_t k = 0; k < K; ++k) acc += A[i * lda + k] * B[j * ldb + k];
      C[i * ldc + j] = accumulate ? C[i * ldc + j] + acc : acc;
    }
}

template <class T>
void panel_gemm(int64_t M, int64_t N, int64_t K, const T* Ap, const T* B, int64_t ldb, T* C, int64_t ldc,
                bool accumulate) {
  constexpr int MR = kPanelMR<T>;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      T acc = 0;
      for (int64_t k = 0; k < K; ++k) acc += Ap[(i / MR) * K * MR + k * MR + i % MR] * B[k * ldb + j];
      C[i * ldc + j] = accumulate ? C[i * ldc + j] + acc : acc;
    }
}

template <class T>
bool packed_gemm_available() {
  return false;
}
template <class T>
void packed_gemm(bool, bool, int64_t, int64_t, int64_t, T, const T*, int64_t, const T*, int64_t, T, T*, int64_t, int) {}

#endif

template bool packed_gemm_available<float>();
template bool packed_gemm_available<double>();
template void packed_gemm<float>(bool, bool, int64_t, int64_t, int64_t, float, const float*, int64_t, const float*,
                                 int64_t, float, float*, int64_t, int);
template void packed_gemm<double>(bool, bool, int64_t, int64_t, int64_t, double, const double*, int64_t,
                                  const double*, int64_t, double, double*, int64_t, int);
template void gemm_nt<float>(int64_t, int64_t, int64_t, const float*, int64_t, const float*, int64_t, float*, int64_t,
                             bool);
template void gemm_nt<double>(int64_t, int64_t, int64_t, const double*, int64_t, const double*, int64_t, double*,
                              int64_t, bool);
template void panel_gemm<float>(int64_t, int64_t, int64_t, const float*, const float*, int64_t, float*, int64_t, bool);
template void panel_gemm<double>(int64_t, int64_t, int64_t, const double*, const double*, int64_t, double*, int64_t,
                                 bool);

}  // namespace gr::native
