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
// bfloat16 operands (packed_gemm_bf16) are packed in pairs along k for vdpbf16ps where the
// CPU has AVX512_BF16 (gemm_bf16_pairs.h), else widened to float as they are packed, so the
// float micro-kernel runs on them: float speed, half the operand bytes read.
#include "core/native/gemm/gemm_packed.h"

#include <omp.h>

#include <algorithm>
#include <type_traits>

#include "core/cpu_backend.h"
#include "core/native/gemm/gemm_bf16_pairs.h"
#include "core/native/gemm/gemm_kernels.h"

namespace gr::native {

#if GR_PACKED_GEMM
namespace {

using namespace gemm_detail;

// Note [GEMM operands in place]
// Packing copies A and B into the micro-kernel's panels: worth it for large products, whose
// panels are reused from cache many times, but for the small ones of a small model (train_gpt
// tiny: 768 x 128 x 384) packing A took 8% of each product. When A is not transposed its rows
// already run along k, and the micro-kernel reads MR of them in place (each MR-row panel
// stays in L1 while it meets every column panel): 90 -> 97 GFLOP/s on those shapes here
// (Zen 3, AVX2). A partial panel (fewer than MR rows left) is still packed, as are bfloat16
// operands (widened to float). B read in place (ldb apart) was slower than packed
// (82 -> 75 GFLOP/s on the weight-gradient shapes): its rows are NR values of long lines.

// Note [Packed A blocks in L2]
// A transposed A (the weight gradients dW = dY^T X: A = dY is [tokens, out], read along its
// columns) cannot be read in place (See Note [GEMM operands in place]) and is packed. The
// loop nest used to pack all of A for a K block up front (MB was 3072 rows): for train_gpt
// tiny's qkv gradient that is 384 x 384 floats, 576 KiB, more than this machine's 512 KiB L2,
// so the packed panels went out to L3 and came back for the micro-kernel, and packing took
// 15% of the product. Now B's block is packed first and A is packed in blocks of about
// 64 KiB (Tile::MB: 42 rows for AVX2 floats) right before their panels meet it, so both stay
// in L2. Packing a 6-wide remainder panel also lost its `rep stos` per k, and 16-float
// pieces copy as whole vectors. Weight-gradient shapes of train_gpt tiny, one thread, median
// GFLOP/s (Zen 3, load 5-6 from other builds; the non-transposed products run at 96-98):
// 384x128x768 82 -> 91, 512x128x768 82 -> 90, 256x128x768 83 -> 90, 128x128x768 84 -> 86,
// 128x512x768 84 -> 86 (these last two are bounded by packing B, 2M flops per packed value,
// and by a 2-row remainder panel: non-transposed A of the same shapes runs at 92 and 87).

// The kinds of product the loop nest below runs, each a tile shape with its cache blocks,
// the type its panels are packed in, how it packs them and how it computes one C tile (rows
// of A read in place when `ar` is given, else the packed panel `ap`; partial tiles too).
// Widening<Tl, S>: float or double panels of T; operands S = T, or bfloat16 widened to float
// while packing.
template <class Tl, class S>
struct Widening {
  using T = typename Tl::S::T;
  using Packed = T;
  static constexpr int MR = Tl::MR, NR = Tl::NR;
  static constexpr int64_t KC = Tl::KC, NB = Tl::NB, MB = Tl::MB, kUnit = 1;
  static int64_t packed_len(int64_t kc) { return kc; }
  // See Note [GEMM operands in place].
  static bool rows_in_place(bool ta, int64_t) { return std::is_same_v<S, T> && !ta; }
  template <int R>
  static void pack(T* d, const S* s, int64_t rs, int64_t ks, int64_t width, int64_t kc) {
    pack_block<T, R>(d, s, rs, ks, width, kc);
  }
  template <class CT>
  static void tile(int64_t kc, const S* ar, int64_t lda, const T* ap, const T* bp, CT* c, int64_t ldc, int64_t mr,
                   int64_t nr, T alpha, T beta, const T* bias) {
    const bool full = mr == MR && nr == NR;
    if constexpr (std::is_same_v<S, T>)
      if (ar) {
        if (full) micro_kernel_impl<Tl, true>(kc, ar, lda, bp, NR, c, ldc, alpha, beta, bias);
        else edge_kernel<Tl, true>(kc, ar, lda, bp, NR, c, ldc, mr, nr, alpha, beta, bias);
        return;
      }
    if (full) micro_kernel_impl<Tl, false>(kc, ap, 0, bp, NR, c, ldc, alpha, beta, bias);
    else edge_kernel<Tl, false>(kc, ap, 0, bp, NR, c, ldc, mr, nr, alpha, beta, bias);
  }
};

#if GR_BF16_PAIRS
// Pairs<Tl>: bfloat16 operands packed in pairs along k for vdpbf16ps (Note [bfloat16 pair
// products]); Tl's shape, and twice its KC in elements, so panels take the bytes Tl's do.
template <class Tl>
struct Pairs {
  using T = float;
  using Packed = Pair;
  static constexpr int MR = Tl::MR, NR = Tl::NR;
  static constexpr int64_t KC = 2 * Tl::KC, NB = Tl::NB, MB = Tl::MB, kUnit = 2;
  static int64_t packed_len(int64_t kc) { return (kc + 1) / 2; }
  static bool rows_in_place(bool ta, int64_t K) { return !ta && K % 2 == 0; }
  template <int R>
  static void pack(Pair* d, const BFloat16* s, int64_t rs, int64_t ks, int64_t width, int64_t kc) {
    pack_pairs<R>(d, s, rs, ks, width, kc);
  }
  template <class CT>
  static void tile(int64_t kc, const BFloat16* ar, int64_t lda, const Pair* ap, const Pair* bp, CT* c, int64_t ldc,
                   int64_t mr, int64_t nr, float alpha, float beta, const float* bias) {
    const int64_t kp = packed_len(kc);
    auto run = [&](auto* out, int64_t ldo, float b, const float* bi) {
      if (ar) pair_kernel<Tl, true>(kp, ar, lda, nullptr, bp, out, ldo, alpha, b, bi);
      else pair_kernel<Tl, false>(kp, nullptr, 0, ap, bp, out, ldo, alpha, b, bi);
    };
    if (mr == MR && nr == NR) return run(c, ldc, beta, bias);
    alignas(64) float tmp[MR * NR];
    run(tmp, NR, 0.f, nullptr);
    merge_edge(tmp, NR, c, ldc, mr, nr, beta, bias);
  }
};
#endif

// The loop nest for one kind of product Kn, operands S, C of type CT (T, or bfloat16 for a
// float product rounded as it is stored: then K must fit one K block). bias (null, or N
// values): added to every row of the finished product (the last K block).
template <class Kn, class T, class S, class CT>
void gemm_serial(bool ta, bool tb, int64_t M, int64_t N, int64_t K, T alpha, const S* A, int64_t lda, const S* B,
                 int64_t ldb, T beta, CT* C, int64_t ldc, const T* bias) {
  using P = typename Kn::Packed;
  constexpr int MR = Kn::MR, NR = Kn::NR;
  // Strides of A(i, k) and B(k, j) along each index.
  const int64_t a_is = ta ? 1 : lda, a_ks = ta ? lda : 1;
  const int64_t b_js = tb ? ldb : 1, b_ks = tb ? 1 : ldb;
  // Equal-sized blocks (rounded up to whole micro-panels) instead of full blocks and a thin
  // remainder: a thin last block would reuse the packed panels too little.
  auto balanced = [](int64_t n, int64_t cap, int64_t unit) {
    const int64_t blocks = (n + cap - 1) / cap;
    return ((n + blocks - 1) / blocks + unit - 1) / unit * unit;
  };
  const bool a_rows = Kn::rows_in_place(ta, K);
  // A packed A is packed MB rows at a time, right before its panels are used (See Note
  // [Packed A blocks in L2]); A read in place needs no blocks.
  const int64_t MB = a_rows ? (M + MR - 1) / MR * MR : balanced(M, Kn::MB, MR);
  const int64_t NB = balanced(N, Kn::NB, NR), KC = balanced(K, Kn::KC, Kn::kUnit);
  P* Ap = scratch<P>(0, static_cast<size_t>((a_rows ? MR : MB) * Kn::packed_len(KC)));
  P* Bp = scratch<P>(1, static_cast<size_t>(NB * Kn::packed_len(KC)));
  for (int64_t p0 = 0; p0 < K; p0 += KC) {
    const int64_t kc = std::min(KC, K - p0), plen = Kn::packed_len(kc);
    const T beta_k = p0 == 0 ? beta : T(1);
    const T* bias_k = p0 + kc == K ? bias : nullptr;
    for (int64_t j0 = 0; j0 < N; j0 += NB) {
      const int64_t nb = std::min(NB, N - j0);
      Kn::template pack<NR>(Bp, B + p0 * b_ks + j0 * b_js, b_js, b_ks, nb, kc);
      for (int64_t i0 = 0; i0 < M; i0 += MB) {
        const int64_t mb = std::min(MB, M - i0);
        if (!a_rows) Kn::template pack<MR>(Ap, A + i0 * a_is + p0 * a_ks, a_is, a_ks, mb, kc);
        for (int64_t ir = 0; ir < mb; ir += MR) {
          const int64_t mr = std::min<int64_t>(MR, mb - ir);
          const S* ar = a_rows && mr == MR ? A + (i0 + ir) * lda + p0 : nullptr;
          const P* ap = Ap + ir * plen;
          if (a_rows && !ar) {  // a partial panel of A in place: packed (at the start of Ap)
            ap = Ap;
            Kn::template pack<MR>(Ap, A + (i0 + ir) * lda + p0, lda, 1, mr, kc);
          }
          for (int64_t jr = 0; jr < nb; jr += NR)
            Kn::tile(kc, ar, lda, ap, Bp + jr * plen, C + (i0 + ir) * ldc + j0 + jr, ldc, mr,
                     std::min<int64_t>(NR, nb - jr), alpha, beta_k, bias_k ? bias_k + j0 + jr : nullptr);
        }
      }
    }
  }
}

// Threads split C into row or column stripes of whole micro-tiles; each packs its own
// operands. Splitting the longer side keeps stripes wide and duplicated packing small.
template <class Kn, class T, class S, class CT>
void gemm_threads(bool ta, bool tb, int64_t M, int64_t N, int64_t K, T alpha, const S* A, int64_t lda, const S* B,
                  int64_t ldb, T beta, CT* C, int64_t ldc, int threads, const T* bias) {
  constexpr int MR = Kn::MR, NR = Kn::NR;
  const bool split_rows = M >= N;
  const int64_t units = split_rows ? (M + MR - 1) / MR : (N + NR - 1) / NR;
  const double flops = 2.0 * static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K);
  int64_t nt = omp_in_parallel() ? 1 : std::min<int64_t>({threads, units, static_cast<int64_t>(flops / 4e6) + 1});
  if (nt <= 1) {
    gemm_serial<Kn>(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, bias);
    return;
  }
#pragma omp parallel num_threads(static_cast<int>(nt))
  {
    const int64_t t = omp_get_thread_num(), n = omp_get_num_threads();
    const int64_t u0 = units * t / n, u1 = units * (t + 1) / n;
    if (split_rows) {
      const int64_t m0 = u0 * MR, m1 = std::min(M, u1 * MR);
      if (m0 < m1)
        gemm_serial<Kn>(ta, tb, m1 - m0, N, K, alpha, A + (ta ? m0 : m0 * lda), lda, B, ldb, beta, C + m0 * ldc, ldc,
                        bias);
    } else {
      const int64_t n0 = u0 * NR, n1 = std::min(N, u1 * NR);
      if (n0 < n1)
        gemm_serial<Kn>(ta, tb, M, n1 - n0, K, alpha, A, lda, B + (tb ? n0 * ldb : n0), ldb, beta, C + n0, ldc,
                        bias ? bias + n0 : nullptr);
    }
  }
}

// The kind of product for a tile Tl and operands S: pairs for bfloat16 where the CPU has
// vdpbf16ps, else widening.
template <class Tl, class S>
struct KindOf {
  using type = Widening<Tl, S>;
};
#if GR_BF16_PAIRS
template <class Tl>
struct KindOf<Tl, BFloat16> {
  using type = Pairs<Tl>;
};
#endif

template <class T, class S, class CT>
void packed_gemm_any(bool ta, bool tb, int64_t M, int64_t N, int64_t K, T alpha, const S* A, int64_t lda, const S* B,
                     int64_t ldb, T beta, CT* C, int64_t ldc, int threads, const T* bias = nullptr) {
  if (M <= 0 || N <= 0) return;
  if (K <= 0 || alpha == T(0)) {
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        const T x = beta == T(0) ? T(0) : beta * static_cast<T>(C[i * ldc + j]);
        C[i * ldc + j] = static_cast<CT>(bias ? x + bias[j] : x);
      }
    return;
  }
  // The tile shape that wastes least on partial tiles (12 x 32 unless 8 x 48 clearly wins,
  // as for the 64-row products of convolutions).
  using Tall = typename KindOf<Tile<T, kTallMR, kTallNV>, S>::type;
  using Wide = typename KindOf<Tile<T, kWideMR, kWideNV>, S>::type;
  auto padded = [&](int64_t mr, int64_t nr) {
    return static_cast<double>((M + mr - 1) / mr * mr) * static_cast<double>((N + nr - 1) / nr * nr);
  };
  // A rounded C holds the finished product only: a K longer than one block goes through a
  // float C first.
  if constexpr (!std::is_same_v<CT, T>) {
    if (K > std::min(Tall::KC, Wide::KC)) {
      T* tmp = scratch<T>(2, static_cast<size_t>(M * N));
      packed_gemm_any<T, S, T>(ta, tb, M, N, K, alpha, A, lda, B, ldb, T(0), tmp, N, threads, bias);
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) C[i * ldc + j] = static_cast<CT>(tmp[i * N + j]);
      return;
    }
  }
  if (padded(Wide::MR, Wide::NR) < 0.97 * padded(Tall::MR, Tall::NR))
    gemm_threads<Wide>(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, threads, bias);
  else
    gemm_threads<Tall>(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, threads, bias);
}

}  // namespace

template <class T>
bool packed_gemm_available() {
  return true;
}

template <class T>
void packed_gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t lda, const T* B,
                 int64_t ldb, T beta, T* C, int64_t ldc, int threads, const T* bias) {
  packed_gemm_any<T, T>(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, threads, bias);
}

void packed_gemm_bf16(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const BFloat16* A, int64_t lda,
                      const BFloat16* B, int64_t ldb, float beta, float* C, int64_t ldc, int threads) {
  packed_gemm_any<float, BFloat16>(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, threads);
}

void packed_gemm_bf16(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const BFloat16* A, int64_t lda,
                      const BFloat16* B, int64_t ldb, const float* bias, BFloat16* C, int64_t ldc, int threads) {
  packed_gemm_any<float, BFloat16>(ta, tb, M, N, K, 1.f, A, lda, B, ldb, 0.f, C, ldc, threads, bias);
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

#else  // no vector ISA: callers use Eigen

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
void packed_gemm(bool, bool, int64_t, int64_t, int64_t, T, const T*, int64_t, const T*, int64_t, T, T*, int64_t, int,
                 const T*) {}
void packed_gemm_bf16(bool, bool, int64_t, int64_t, int64_t, float, const BFloat16*, int64_t, const BFloat16*, int64_t,
                      float, float*, int64_t, int) {}
void packed_gemm_bf16(bool, bool, int64_t, int64_t, int64_t, const BFloat16*, int64_t, const BFloat16*, int64_t,
                      const float*, BFloat16*, int64_t, int) {}

#endif

}  // namespace gr::native

bool gr::backends::cpu::bf16_pair_products() {
#if GR_BF16_PAIRS
  return true;
#else
  return false;
#endif
}

namespace gr::native {

template bool packed_gemm_available<float>();
template bool packed_gemm_available<double>();
template void packed_gemm<float>(bool, bool, int64_t, int64_t, int64_t, float, const float*, int64_t, const float*,
                                 int64_t, float, float*, int64_t, int, const float*);
template void packed_gemm<double>(bool, bool, int64_t, int64_t, int64_t, double, const double*, int64_t,
                                  const double*, int64_t, double, double*, int64_t, int, const double*);
template void panel_gemm<float>(int64_t, int64_t, int64_t, const float*, const float*, int64_t, float*, int64_t, bool);
template void panel_gemm<double>(int64_t, int64_t, int64_t, const double*, const double*, int64_t, double*, int64_t,
                                 bool);

}  // namespace gr::native
