// The fused attention CPU kernels (FlashAttention-2): tiles of queries x keys (Note
// [Attention tiles]), an online softmax in the forward (running max and sum, the output rescaled as the max grows)
// and weights recomputed from the saved logsumexp in the backward. Tile products run on a
// register-tile kernel built from the packed GEMM's vector ops (gemm_kernels.h); operands are
// zero-padded per batch entry, so memory stays linear in L and S. See core/native/attention.h.
#include <algorithm>
#include <bit>
#include <cmath>
#include <type_traits>
#include <vector>

#include "core/factory.h"
#include "core/functors_fast_math.h"
#include "core/native/attention.h"
#include "core/native/gemm_kernels.h"
#include "core/parallel.h"

namespace gr::native {

GR_DEFINE_DISPATCH(AttentionFn, attention_stub);
GR_DEFINE_DISPATCH(AttentionBackwardFn, attention_backward_stub);

namespace {

#if GR_PACKED_GEMM
template <class T>
using Vec = typename gemm_detail::VecOf<T>::S;
constexpr int kMR = gemm_detail::kTallMR, kNV = gemm_detail::kTallNV;
#else
template <class T>
struct Vec {  // no vector ISA: one-lane "vectors", the same loops
  using V = T;
  static constexpr int L = 1;
  static V load(const T* p) { return *p; }
  static void store(T* p, V v) { *p = v; }
  static V set1(T x) { return x; }
  static V zero() { return T(0); }
  static V fma(V a, V b, V c) { return a * b + c; }
  static V add(V a, V b) { return a + b; }
};
constexpr int kMR = 4, kNV = 4;
#endif
template <class T>
constexpr int64_t kNR = kNV * Vec<T>::L;
// Note [Attention tiles]
// A block of br queries meets the keys in tiles of up to kBcMax: br x w scores, where w is
// the tile's keys rounded up to kCw (a multiple of the register tile's columns and of the
// 8 lanes of the row loops), so a short or causal sequence computes little beyond its
// visible keys (T = 64 causal: 2944 scores of the 2080 visible, against 9216 with fixed
// 48 x 96 tiles). Products run on whole register columns; their rows (queries, or keys for
// the transposed products) and their inner dimension take any length. Padding columns of a
// tile are masked to -inf, so their weights are 0.
constexpr int64_t kBcMax = 96;
template <class T>
constexpr int64_t kCw = std::max<int64_t>(kNR<T>, 8);
// Queries per block: fewer for short sequences (less causal waste past the diagonal).
int64_t query_block(int64_t L) { return L <= 128 ? 24 : 48; }

int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

// C[M, N] (+)= A B with A(r, k) = a[r * ar + k * ak] (rows read in place, or a transposed
// matrix), row k of B at b + k * ldb. N is a multiple of kNR<T>; M and K are any. A partial
// block of rows reads its last row again for the missing ones and stores only its own.
template <class T>
void tile_gemm(int64_t M, int64_t N, int64_t K, const T* a, int64_t ar, int64_t ak, const T* b, int64_t ldb, T* c,
               int64_t ldc, bool accumulate) {
  using S = Vec<T>;
  using V = typename S::V;
  constexpr int L = S::L;
  for (int64_t j = 0; j < N; j += kNR<T>)
    for (int64_t i = 0; i < M; i += kMR) {
      const int64_t mr = std::min<int64_t>(kMR, M - i);
      int64_t row[kMR];
#pragma GCC unroll 16
      for (int r = 0; r < kMR; ++r) row[r] = std::min<int64_t>(r, mr - 1) * ar;
      V acc[kMR][kNV];
#pragma GCC unroll 16
      for (int r = 0; r < kMR; ++r)
#pragma GCC unroll 4
        for (int v = 0; v < kNV; ++v) acc[r][v] = S::zero();
      const T* ap = a + i * ar;
      const T* bp = b + j;
      for (int64_t k = 0; k < K; ++k) {
        V bv[kNV];
#pragma GCC unroll 4
        for (int v = 0; v < kNV; ++v) bv[v] = S::load(bp + k * ldb + v * L);
#pragma GCC unroll 16
        for (int r = 0; r < kMR; ++r) {
          const V av = S::set1(ap[row[r] + k * ak]);
#pragma GCC unroll 4
          for (int v = 0; v < kNV; ++v) acc[r][v] = S::fma(av, bv[v], acc[r][v]);
        }
      }
      T* cp = c + i * ldc + j;
#pragma GCC unroll 16
      for (int r = 0; r < kMR; ++r) {
        if (r >= mr) break;
#pragma GCC unroll 4
        for (int v = 0; v < kNV; ++v)
          S::store(cp + r * ldc + v * L, accumulate ? S::add(S::load(cp + r * ldc + v * L), acc[r][v]) : acc[r][v]);
      }
    }
}

// exp of the weights: float's is vectorisable, See Note [Vectorisable exp and erf].
using math::fast_exp;

// Row max and sum over n values (a multiple of 8) in 8 independent lanes, so GCC vectorises
// them (one running value would be a serial chain: float addition does not reassociate).
template <class T>
T row_max(const T* x, int64_t n) {
  T m[8];
  for (int u = 0; u < 8; ++u) m[u] = attention_neg_inf<T>();
  for (int64_t j = 0; j < n; j += 8)
    for (int u = 0; u < 8; ++u) m[u] = x[j + u] > m[u] ? x[j + u] : m[u];
  T r = m[0];
  for (int u = 1; u < 8; ++u) r = m[u] > r ? m[u] : r;
  return r;
}
template <class T>
T row_sum(const T* x, int64_t n) {
  T s[8] = {};
  for (int64_t j = 0; j < n; j += 8)
    for (int u = 0; u < 8; ++u) s[u] += x[j + u];
  return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}
// sum of a[j] * b[j] over j < n in 8 lanes, as row_sum (one running sum was a serial chain
// of n FMAs per row; bench_attention --T 64 --B 12 --H 4 --D 32, forward and backward:
// 0.596-0.602 -> 0.584-0.595 ms).
template <class T, class I>
T row_dot(const T* a, const I* b, int64_t n) {
  T s[8] = {};
  int64_t j = 0;
  for (; j + 8 <= n; j += 8)
    for (int u = 0; u < 8; ++u) s[u] += a[j + u] * static_cast<T>(b[j + u]);
  for (int u = 0; j < n; ++j, ++u) s[u] += a[j] * static_cast<T>(b[j]);
  return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}
// row[0, n) = exp(row - shift).
template <class T>
void row_exp(T* __restrict row, int64_t n, T shift) {
  for (int64_t j = 0; j < n; ++j) row[j] = fast_exp(row[j] - shift);
}

// row[0, n) *= the dropout factors of weights (b, i, j0 ..): one Philox block per 4 weights.
// The same stream as attention_dropout_factor (Note [Attention dropout stream]).
template <class T>
void apply_dropout_row(const AttentionParams& p, int64_t b, int64_t i, int64_t j0, int64_t n, T* row) {
  const uint64_t first = static_cast<uint64_t>((b * p.L + i) * p.S + j0);
  const T scale = static_cast<T>(p.dropout_scale);
  uint32_t r[4];
  for (int64_t jj = 0; jj < n; ++jj) {
    const uint64_t e = first + static_cast<uint64_t>(jj);
    if (jj == 0 || e % 4 == 0) Philox4x32(p.seed, 0, p.offset + e / 4).next(r);
    row[jj] *= dropout_keep(r[e % 4], p.dropout_threshold) ? scale : T(0);
  }
}

// One key tile of a query block: keys [j0, j0 + nc) are real (and may be visible), the
// tile's w >= nc columns are what the products compute.
struct KeyTile {
  int64_t j0, nc, w;
};
template <class T>
KeyTile key_tile(int64_t j0, int64_t kend) {
  const int64_t nc = std::min(kBcMax, kend - j0);
  return {j0, nc, round_up(nc, kCw<T>)};
}

// Masks tile row (b, i) in place: of its t.w columns the first t.nc are keys, the rest -inf.
// A float mask holds I values.
template <class T, class I>
void mask_row(const AttentionParams& p, const void* mask, int64_t b, int64_t i, const KeyTile& t, T* row) {
  if (p.mask == AttentionMask::None) {  // causal or past the tile's keys only: a tail of -inf
    const int64_t visible = p.causal ? std::clamp<int64_t>(i - t.j0 + 1, 0, t.nc) : t.nc;
    for (int64_t jj = visible; jj < t.w; ++jj) row[jj] = attention_neg_inf<T>();
    return;
  }
  for (int64_t jj = 0; jj < t.nc; ++jj) row[jj] = attention_masked_score<T, I>(p, row[jj], mask, b, i, t.j0 + jj);
  for (int64_t jj = t.nc; jj < t.w; ++jj) row[jj] = attention_neg_inf<T>();
}

// A tile needs masking when a mask is given, it has padding columns, or (causal) a key j of
// the tile lies beyond its first query i0.
bool tile_needs_mask(const AttentionParams& p, int64_t i0, const KeyTile& t) {
  return p.mask != AttentionMask::None || t.nc < t.w || (p.causal && t.j0 + t.nc - 1 > i0);
}

// Keys a block of queries [i0, i0 + nr) sees: all S, or (causal) those up to its last query.
int64_t key_end(const AttentionParams& p, int64_t i0, int64_t nr) {
  return p.causal ? std::min(p.S, i0 + nr) : p.S;
}

// dst[c * ld + j] = src[j * rs + c] for j < n, c < cols, zeros for j in [n, width): the
// transpose of n rows rs apart into a [cols, width] block, the tiles' B operand (bfloat16
// sources widened to float). float goes through 8x8 register transposes (element by element,
// the scattered stores took a quarter of the backward's own time at T = 64).
template <class T, class I>
void transpose_rows(T* dst, int64_t ld, int64_t width, int64_t n, int64_t cols, const I* src, int64_t rs) {
  int64_t j0 = 0, c8 = 0;
#if GR_PACKED_GEMM
  if constexpr (std::is_same_v<T, float>) {
    c8 = cols / 8 * 8;
    for (; j0 + 8 <= n; j0 += 8)
      for (int64_t c = 0; c < c8; c += 8) gemm_detail::transpose8x8(dst + c * ld + j0, ld, src + j0 * rs + c, rs);
    for (int64_t j = 0; j < j0; ++j)  // the columns past the last whole 8
      for (int64_t c = c8; c < cols; ++c) dst[c * ld + j] = static_cast<T>(src[j * rs + c]);
  }
#endif
  for (int64_t j = j0; j < n; ++j)
    for (int64_t c = 0; c < cols; ++c) dst[c * ld + j] = static_cast<T>(src[j * rs + c]);
  for (int64_t c = 0; c < cols; ++c) std::fill(dst + c * ld + n, dst + c * ld + width, T(0));
}
// dst[j * ld + c] = factor * rows[j][c] for j < n, c < cols, zero columns up to ld.
template <class T, class Row>
void copy_rows(T* dst, int64_t ld, int64_t n, int64_t cols, const Row& row, T factor = T(1)) {
  for (int64_t j = 0; j < n; ++j) {
    const auto* src = row(j);
    T* d = dst + j * ld;
    for (int64_t c = 0; c < cols; ++c) d[c] = static_cast<T>(src[c]) * factor;
    std::fill(d + cols, d + ld, T(0));
  }
}

// T: the arithmetic's type; I: the operands' (T, or bfloat16 computed in float: Note
// [Reduced float math]), converted as the tiles are filled and as results are stored.
template <class T, class I>
void attention_forward(const I* q, const I* k, const I* v, const void* mask, I* out, T* lse, const AttentionParams& p) {
  const int64_t L = p.L, S = p.S, E = p.E, Ev = p.Ev;
  const int64_t Sp = round_up(S, kCw<T>), Evp = round_up(Ev, kNR<T>), br = query_block(L), nqb = (L + br - 1) / br;
  const T scale = static_cast<T>(p.scale);
  // Per batch entry, K^T [E, Sp] (zero-padded) and V [S, Evp]: the B operands of the tiles.
  Tensor kt_buf = empty({p.B * E * Sp}, TensorOptions(CppTypeToScalarType<T>::value));
  Tensor v_buf = empty({p.B * S * Evp}, TensorOptions(CppTypeToScalarType<T>::value));
  T* kt = kt_buf.data_ptr<T>();
  T* vp = v_buf.data_ptr<T>();
  parallel_for(0, p.B, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      transpose_rows(kt + b * E * Sp, Sp, Sp, S, E, k + p.k_at.at(b, 0), p.k_at.row_stride);
      copy_rows(vp + b * S * Evp, Evp, S, Ev, [&](int64_t j) { return v + p.v_at.at(b, j); });
    }
  });
  parallel_for(0, p.B * nqb, 1, [&](int64_t w0, int64_t w1) {
    std::vector<T> qs(br * E), s(br * kBcMax), o(br * Evp), m(br), l(br);
    for (int64_t w = w0; w < w1; ++w) {
      const int64_t b = w / nqb, i0 = w % nqb * br, nr = std::min(br, L - i0);
      copy_rows(qs.data(), E, nr, E, [&](int64_t r) { return q + p.q_at.at(b, i0 + r); }, scale);
      std::fill(m.begin(), m.end(), attention_neg_inf<T>());
      std::fill(l.begin(), l.end(), T(0));
      std::fill(o.begin(), o.end(), T(0));
      const int64_t kend = key_end(p, i0, nr);
      for (int64_t j0 = 0; j0 < kend; j0 += kBcMax) {
        const KeyTile t = key_tile<T>(j0, kend);
        tile_gemm<T>(nr, t.w, E, qs.data(), E, 1, kt + b * E * Sp + j0, Sp, s.data(), kBcMax, false);
        const bool masked = tile_needs_mask(p, i0, t);
        for (int64_t r = 0; r < nr; ++r) {
          T* row = s.data() + r * kBcMax;
          if (masked) mask_row<T, I>(p, mask, b, i0 + r, t, row);
          const T mt = row_max(row, t.w);
          const T mnew = std::max(m[r], mt);
          if (mnew == attention_neg_inf<T>()) {  // no visible key so far
            std::fill(row, row + t.w, T(0));
            continue;
          }
          row_exp(row, t.w, mnew);
          const T sum = row_sum(row, t.w);
          const T alpha = fast_exp(m[r] - mnew);
          l[r] = l[r] * alpha + sum;
          m[r] = mnew;
          if (alpha != T(1))
            for (int64_t c = 0; c < Evp; ++c) o[r * Evp + c] *= alpha;
          if (p.dropout_p > 0) apply_dropout_row(p, b, i0 + r, j0, t.nc, row);
        }
        tile_gemm<T>(nr, Evp, t.nc, s.data(), kBcMax, 1, vp + (b * S + j0) * Evp, Evp, o.data(), Evp, true);
      }
      for (int64_t r = 0; r < nr; ++r) {
        lse[b * L + i0 + r] = attention_lse(m[r], l[r]);
        const T inv = l[r] > T(0) ? T(1) / l[r] : T(0);
        I* out_row = out + p.out_at.at(b, i0 + r);
        for (int64_t c = 0; c < Ev; ++c) out_row[c] = static_cast<I>(o[r * Evp + c] * inv);
      }
    }
  });
}

template <class T, class I>
void attention_backward(const I* go, const I* q, const I* k, const I* v, const void* mask, const I* out, const T* lse,
                        I* dq, I* dk, I* dv, const AttentionParams& p) {
  const int64_t L = p.L, S = p.S, E = p.E, Ev = p.Ev, br = query_block(L);
  const int64_t Sp = round_up(S, kCw<T>), Ep = round_up(E, kNR<T>), Evp = round_up(Ev, kNR<T>);
  const T scale = static_cast<T>(p.scale);
  const bool dropout = p.dropout_p > 0;
  // One batch entry per step; each thread holds padded copies of its entry's operands and
  // the gradient accumulators (linear in L and S).
  parallel_for(0, p.B, 1, [&](int64_t b0, int64_t b1) {
    const int64_t sizes[] = {L * Ep, S * Ep, E * Sp, Ev * Sp, L * Evp, L * Ep, S * Ep, S * Evp, L};
    int64_t total = 0;
    for (int64_t n : sizes) total += n;
    Tensor buf = empty({total}, TensorOptions(CppTypeToScalarType<T>::value));
    T* ptrs[9];
    T* at = buf.data_ptr<T>();
    for (int x = 0; x < 9; ++x) {
      ptrs[x] = at;
      at += sizes[x];
    }
    T *qs = ptrs[0], *kp = ptrs[1], *kt = ptrs[2], *vt = ptrs[3], *dop = ptrs[4];
    T *dqa = ptrs[5], *dka = ptrs[6], *dva = ptrs[7], *D = ptrs[8];
    std::vector<T> P(br * kBcMax), dP(br * kBcMax), Z(dropout ? br * kBcMax : 0);
    for (int64_t b = b0; b < b1; ++b) {
      // Rows of batch entry b in each operand's layout (Note [Attention operands in place]).
      auto q_row = [&](int64_t i) { return q + p.q_at.at(b, i); };
      auto k_row = [&](int64_t j) { return k + p.k_at.at(b, j); };
      auto v_row = [&](int64_t j) { return v + p.v_at.at(b, j); };
      copy_rows(qs, Ep, L, E, q_row, scale);
      copy_rows(kp, Ep, S, E, k_row);
      transpose_rows(kt, Sp, Sp, S, E, k_row(0), p.k_at.row_stride);
      transpose_rows(vt, Sp, Sp, S, Ev, v_row(0), p.v_at.row_stride);
      for (int64_t i = 0; i < L; ++i) {
        const I* go_row = go + p.grad_out_at.at(b, i);
        T* dr = dop + i * Evp;
        for (int64_t c = 0; c < Ev; ++c) dr[c] = static_cast<T>(go_row[c]);
        std::fill(dr + Ev, dr + Evp, T(0));
        D[i] = row_dot(dr, out + p.out_at.at(b, i), Ev);  // D = rowsum(dO * O)
      }
      std::fill(dqa, dqa + L * Ep + S * Ep + S * Evp, T(0));  // dqa, dka, dva are adjacent
      for (int64_t i0 = 0; i0 < L; i0 += br) {
        const int64_t nr = std::min(br, L - i0), kend = key_end(p, i0, nr);
        for (int64_t j0 = 0; j0 < kend; j0 += kBcMax) {
          const KeyTile t = key_tile<T>(j0, kend);
          const bool masked = tile_needs_mask(p, i0, t);
          // P = exp(Q K^T * scale + mask - lse), recomputed.
          tile_gemm<T>(nr, t.w, E, qs + i0 * Ep, Ep, 1, kt + j0, Sp, P.data(), kBcMax, false);
          for (int64_t r = 0; r < nr; ++r) {
            T* row = P.data() + r * kBcMax;
            const T lr = lse[b * L + i0 + r];
            if (lr == attention_neg_inf<T>()) {  // a fully masked row
              std::fill(row, row + t.w, T(0));
              if (dropout) std::fill(Z.data() + r * kBcMax, Z.data() + r * kBcMax + t.w, T(0));
              continue;
            }
            if (masked) mask_row<T, I>(p, mask, b, i0 + r, t, row);
            row_exp(row, t.w, lr);
            if (dropout) {
              T* z = Z.data() + r * kBcMax;
              std::fill(z, z + t.w, T(1));
              apply_dropout_row(p, b, i0 + r, j0, t.nc, z);
            }
          }
          // dV += (P * Z)^T dO; dP = dO V^T.
          const T* pd = P.data();
          if (dropout) {
            for (int64_t r = 0; r < nr; ++r)
              for (int64_t jj = 0; jj < t.w; ++jj) Z[r * kBcMax + jj] *= P[r * kBcMax + jj];  // Z now holds P * Z
            pd = Z.data();
          }
          tile_gemm<T>(t.nc, Evp, nr, pd, 1, kBcMax, dop + i0 * Evp, Evp, dva + j0 * Evp, Evp, true);
          tile_gemm<T>(nr, t.w, Ev, dop + i0 * Evp, Evp, 1, vt + j0, Sp, dP.data(), kBcMax, false);
          // dS = P * (dP * Z - D), into dP; with dropout P * dP * Z is (P * Z) * dP.
          for (int64_t r = 0; r < nr; ++r) {
            const T d = D[i0 + r];
            T* ds = dP.data() + r * kBcMax;
            const T* pr = P.data() + r * kBcMax;
            if (dropout) {
              const T* pz = Z.data() + r * kBcMax;
              for (int64_t jj = 0; jj < t.w; ++jj) ds[jj] = pz[jj] * ds[jj] - pr[jj] * d;
            } else {
              for (int64_t jj = 0; jj < t.w; ++jj) ds[jj] = pr[jj] * (ds[jj] - d);
            }
          }
          // dQ += dS K (scaled below); dK += dS^T (Q * scale).
          tile_gemm<T>(nr, Ep, t.nc, dP.data(), kBcMax, 1, kp + j0 * Ep, Ep, dqa + i0 * Ep, Ep, true);
          tile_gemm<T>(t.nc, Ep, nr, dP.data(), 1, kBcMax, qs + i0 * Ep, Ep, dka + j0 * Ep, Ep, true);
        }
      }
      for (int64_t i = 0; i < L; ++i) {
        I* d = dq + p.dq_at.at(b, i);
        for (int64_t e = 0; e < E; ++e) d[e] = static_cast<I>(dqa[i * Ep + e] * scale);
      }
      for (int64_t j = 0; j < S; ++j) {
        I* dkr = dk + p.dk_at.at(b, j);
        I* dvr = dv + p.dv_at.at(b, j);
        for (int64_t e = 0; e < E; ++e) dkr[e] = static_cast<I>(dka[j * Ep + e]);
        for (int64_t c = 0; c < Ev; ++c) dvr[c] = static_cast<I>(dva[j * Evp + c]);
      }
    }
  });
}

// Calls fn.template operator()<T, I>() for the operands' dtype: I = T for float32 and
// float64, I = bfloat16 with T = float.
template <class F>
void dispatch_attention(ScalarType t, const char* op, F&& fn) {
  if (t == kBFloat16) return fn.template operator()<float, BFloat16>();
  dispatch_floating(t, op, [&]<class T>() { fn.template operator()<T, T>(); });
}

void attention_cpu(const void* q, const void* k, const void* v, const void* mask, void* out, void* lse,
                   const AttentionParams& p, ScalarType t) {
  dispatch_attention(t, "scaled_dot_product_attention", [&]<class T, class I>() {
    attention_forward<T, I>(static_cast<const I*>(q), static_cast<const I*>(k), static_cast<const I*>(v), mask,
                            static_cast<I*>(out), static_cast<T*>(lse), p);
  });
}

void attention_backward_cpu(const void* grad_out, const void* q, const void* k, const void* v, const void* mask,
                            const void* out, const void* lse, void* dq, void* dk, void* dv, const AttentionParams& p,
                            ScalarType t) {
  dispatch_attention(t, "scaled_dot_product_attention_backward", [&]<class T, class I>() {
    attention_backward<T, I>(static_cast<const I*>(grad_out), static_cast<const I*>(q), static_cast<const I*>(k),
                             static_cast<const I*>(v), mask, static_cast<const I*>(out), static_cast<const T*>(lse),
                             static_cast<I*>(dq), static_cast<I*>(dk), static_cast<I*>(dv), p);
  });
}

}  // namespace

GR_REGISTER_KERNEL(attention_stub, kCPU, &attention_cpu);
GR_REGISTER_KERNEL(attention_backward_stub, kCPU, &attention_backward_cpu);

}  // namespace gr::native
