// The fused attention CPU kernels (FlashAttention-2): tiles of queries x keys (Note
// [Attention tiles]), an online softmax in the forward (running max and sum, the output
// rescaled as the max grows) and weights recomputed from the saved logsumexp in the backward.
// Tile products run on register-tile kernels (attention_tiles.h; bfloat16 pairs in
// attention_pairs.h: Note [Attention tile policies]); operands are zero-padded per batch
// entry, so memory stays linear in L and S. See core/native/attention.h.
#include <algorithm>
#include <bit>
#include <cmath>
#include <type_traits>
#include <vector>

#include "core/factory.h"
#include "core/native/attention.h"
#include "core/native/attention_pairs.h"
#include "core/native/attention_tiles.h"
#include "core/parallel.h"

namespace gr::native {

GR_DEFINE_DISPATCH(AttentionFn, attention_stub);
GR_DEFINE_DISPATCH(AttentionBackwardFn, attention_backward_stub);

namespace {

using namespace attention_detail;

// Note [Attention tile policies]
// The loops below (the online softmax forward, the FlashAttention-2 backward) are written
// once; what the tile products read is a policy. FloatForward/FloatBackward<T, I> multiply
// in T: they copy Q (pre-scaled), K, K^T, V^T and dO of a batch entry into padded T buffers
// (bfloat16 widened) for tile_gemm. PairForward/PairBackward (attention_pairs.h), chosen for
// bfloat16 where the CPU has AVX512_BF16 and the widths are even, multiply bfloat16 pairs on
// vdpbf16ps: Q and dO are read where they lie, K, V, Q and dO are packed in pairs, and the
// weights P and their gradients dS are rounded to bfloat16 before the products that take
// them (as PyTorch's CPU flash attention does for bfloat16); sums and the softmax stay float.
// train_gpt --dtype bf16, alternating against the float tiles: tiny +2-4%, small +3-7%.

// The forward's products in T. Per batch entry (shared by the threads running its query
// blocks): K^T [E, Sp] (zero-padded) and V [S, Evp], the B operands of the tiles.
template <class T, class I>
struct FloatForward {
  const AttentionParams& p;
  const I *q, *k, *v;
  int64_t Sp, Evp;
  T scale;
  Tensor kt_buf, v_buf;
  struct Scratch {
    std::vector<T> qs;  // the block's queries, scaled
  };
  FloatForward(const AttentionParams& p_, const I* q_, const I* k_, const I* v_)
      : p(p_), q(q_), k(k_), v(v_), Sp(round_up(p.S, kCw<T>)), Evp(round_up(p.Ev, kNR<T>)),
        scale(static_cast<T>(p.scale)) {
    kt_buf = empty({p.B * p.E * Sp}, TensorOptions(CppTypeToScalarType<T>::value));
    v_buf = empty({p.B * p.S * Evp}, TensorOptions(CppTypeToScalarType<T>::value));
  }
  T* kt(int64_t b) const { return kt_buf.data_ptr<T>() + b * p.E * Sp; }
  T* vp(int64_t b) const { return v_buf.data_ptr<T>() + b * p.S * Evp; }
  void prepare(int64_t b) {
    transpose_rows(kt(b), Sp, Sp, p.S, p.E, k + p.k_at.at(b, 0), p.k_at.row_stride);
    copy_rows(vp(b), Evp, p.S, p.Ev, [&](int64_t j) { return v + p.v_at.at(b, j); });
  }
  Scratch scratch(int64_t br) const { return {std::vector<T>(br * p.E)}; }
  void begin_block(Scratch& sc, int64_t b, int64_t i0, int64_t nr) const {
    copy_rows(sc.qs.data(), p.E, nr, p.E, [&](int64_t r) { return q + p.q_at.at(b, i0 + r); }, scale);
  }
  // s [nr, t.w] (row stride kBcMax) = scale * Q K^T for the block's queries and the tile's keys.
  void scores(Scratch& sc, int64_t b, int64_t, int64_t nr, const KeyTile& t, T* s) const {
    tile_gemm<T>(nr, t.w, p.E, sc.qs.data(), p.E, 1, kt(b) + t.j0, Sp, s, kBcMax, false);
  }
  // o [nr, Evp] += P V over the tile's keys (P in s).
  void add_pv(Scratch&, int64_t b, int64_t nr, const KeyTile& t, const T* s, T* o) const {
    tile_gemm<T>(nr, Evp, t.nc, s, kBcMax, 1, vp(b) + t.j0 * Evp, Evp, o, Evp, true);
  }
};

// The backward's products in T, one batch entry at a time per thread: Q (scaled), K, K^T,
// V^T and dO, padded.
template <class T, class I>
struct FloatBackward {
  const AttentionParams& p;
  const I *q, *k, *v, *go;
  int64_t Sp, Ep, Evp;
  T scale;
  T dk_scale = T(1);  // dK comes from the scaled Q
  Tensor buf;
  T *qs, *kp, *kt, *vt, *dop;
  FloatBackward(const AttentionParams& p_, const I* q_, const I* k_, const I* v_, const I* go_)
      : p(p_), q(q_), k(k_), v(v_), go(go_), Sp(round_up(p.S, kCw<T>)), Ep(round_up(p.E, kNR<T>)),
        Evp(round_up(p.Ev, kNR<T>)), scale(static_cast<T>(p.scale)) {
    const int64_t sizes[] = {p.L * Ep, p.S * Ep, p.E * Sp, p.Ev * Sp, p.L * Evp};
    int64_t total = 0;
    for (int64_t n : sizes) total += n;
    buf = empty({total}, TensorOptions(CppTypeToScalarType<T>::value));
    T* at = buf.data_ptr<T>();
    T** ptrs[] = {&qs, &kp, &kt, &vt, &dop};
    for (int x = 0; x < 5; ++x) *ptrs[x] = at, at += sizes[x];
  }
  void begin_entry(int64_t b) {
    auto k_row = [&](int64_t j) { return k + p.k_at.at(b, j); };
    auto v_row = [&](int64_t j) { return v + p.v_at.at(b, j); };
    copy_rows(qs, Ep, p.L, p.E, [&](int64_t i) { return q + p.q_at.at(b, i); }, scale);
    copy_rows(kp, Ep, p.S, p.E, k_row);
    transpose_rows(kt, Sp, Sp, p.S, p.E, k_row(0), p.k_at.row_stride);
    transpose_rows(vt, Sp, Sp, p.S, p.Ev, v_row(0), p.v_at.row_stride);
    copy_rows(dop, Evp, p.L, p.Ev, [&](int64_t i) { return go + p.grad_out_at.at(b, i); });
  }
  void scores(int64_t i0, int64_t nr, const KeyTile& t, T* s) const {
    tile_gemm<T>(nr, t.w, p.E, qs + i0 * Ep, Ep, 1, kt + t.j0, Sp, s, kBcMax, false);
  }
  // dV[j0 ..] += PZ^T dO for the block's queries.
  void add_dv(int64_t i0, int64_t nr, const KeyTile& t, const T* pz, T* dva) const {
    tile_gemm<T>(t.nc, Evp, nr, pz, 1, kBcMax, dop + i0 * Evp, Evp, dva + t.j0 * Evp, Evp, true);
  }
  // dP [nr, t.w] = dO V^T.
  void dp(int64_t i0, int64_t nr, const KeyTile& t, T* dP) const {
    tile_gemm<T>(nr, t.w, p.Ev, dop + i0 * Evp, Evp, 1, vt + t.j0, Sp, dP, kBcMax, false);
  }
  // dQ [i0 ..] += dS K (scaled at the end); dK [j0 ..] += dS^T Q (Q scaled here).
  void add_dq_dk(int64_t i0, int64_t nr, const KeyTile& t, const T* ds, T* dqa, T* dka) const {
    tile_gemm<T>(nr, Ep, t.nc, ds, kBcMax, 1, kp + t.j0 * Ep, Ep, dqa + i0 * Ep, Ep, true);
    tile_gemm<T>(t.nc, Ep, nr, ds, 1, kBcMax, qs + i0 * Ep, Ep, dka + t.j0 * Ep, Ep, true);
  }
};

// T: the arithmetic's type; I: the operands' (T, or bfloat16 computed in float: Note
// [Reduced float math]), converted as the tiles are filled and as results are stored. The
// products are Tiles' (Note [Attention tile policies]).
template <class T, class I, class Tiles>
void attention_forward(const I* q, const I* k, const I* v, const void* mask, I* out, T* lse, const AttentionParams& p) {
  const int64_t L = p.L, Ev = p.Ev;
  const int64_t Evp = round_up(Ev, kNR<T>), br = query_block(L), nqb = (L + br - 1) / br;
  Tiles tiles(p, q, k, v);
  parallel_for(0, p.B, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) tiles.prepare(b);
  });
  parallel_for(0, p.B * nqb, 1, [&](int64_t w0, int64_t w1) {
    auto sc = tiles.scratch(br);
    std::vector<T> s(br * kBcMax), o(br * Evp);
    std::vector<OnlineSoftmax<T>> rows(br);  // Note [Online softmax]
    for (int64_t w = w0; w < w1; ++w) {
      const int64_t b = w / nqb, i0 = w % nqb * br, nr = std::min(br, L - i0);
      tiles.begin_block(sc, b, i0, nr);
      std::fill(rows.begin(), rows.end(), OnlineSoftmax<T>());
      std::fill(o.begin(), o.end(), T(0));
      const int64_t kend = key_end(p, i0, nr);
      for (int64_t j0 = 0; j0 < kend; j0 += kBcMax) {
        const KeyTile t = key_tile<T>(j0, kend);
        tiles.scores(sc, b, i0, nr, t, s.data());
        const bool masked = tile_needs_mask(p, i0, t);
        for (int64_t r = 0; r < nr; ++r) {
          T* row = s.data() + r * kBcMax;
          if (masked) mask_row<T, I>(p, mask, b, i0 + r, t, row);
          const T mnew = rows[r].next_max(row_max(row, t.w));
          if (mnew == attention_neg_inf<T>()) {  // no visible key so far
            std::fill(row, row + t.w, T(0));
            continue;
          }
          row_exp(row, t.w, mnew);
          const T sum = row_sum(row, t.w);
          const T alpha = rows[r].advance(mnew, sum, [](T x) { return fast_exp(x); });
          if (alpha != T(1))
            for (int64_t c = 0; c < Evp; ++c) o[r * Evp + c] *= alpha;
          if (p.dropout_p > 0) apply_dropout_row(p, b, i0 + r, j0, t.nc, row);
        }
        tiles.add_pv(sc, b, nr, t, s.data(), o.data());
      }
      for (int64_t r = 0; r < nr; ++r) {
        lse[b * L + i0 + r] = rows[r].lse();
        const T inv = rows[r].inv_sum();
        I* out_row = out + p.out_at.at(b, i0 + r);
        for (int64_t c = 0; c < Ev; ++c) out_row[c] = static_cast<I>(o[r * Evp + c] * inv);
      }
    }
  });
}

template <class T, class I, class Tiles>
void attention_backward(const I* go, const I* q, const I* k, const I* v, const void* mask, const I* out, const T* lse,
                        I* dq, I* dk, I* dv, const AttentionParams& p) {
  const int64_t L = p.L, S = p.S, E = p.E, Ev = p.Ev, br = query_block(L);
  const int64_t Ep = round_up(E, kNR<T>), Evp = round_up(Ev, kNR<T>);
  const T scale = static_cast<T>(p.scale);
  const bool dropout = p.dropout_p > 0;
  // One batch entry per step; each thread holds its entry's operands (Tiles) and the
  // gradient accumulators (linear in L and S).
  parallel_for(0, p.B, 1, [&](int64_t b0, int64_t b1) {
    Tiles tiles(p, q, k, v, go);
    std::vector<T> acc(L * Ep + S * Ep + S * Evp), D(L);
    T *dqa = acc.data(), *dka = dqa + L * Ep, *dva = dka + S * Ep;
    std::vector<T> P(br * kBcMax), dP(br * kBcMax), Z(dropout ? br * kBcMax : 0);
    for (int64_t b = b0; b < b1; ++b) {
      tiles.begin_entry(b);
      for (int64_t i = 0; i < L; ++i)  // D = rowsum(dO * O)
        D[i] = row_dot<T>(go + p.grad_out_at.at(b, i), out + p.out_at.at(b, i), Ev);
      std::fill(acc.begin(), acc.end(), T(0));
      for (int64_t i0 = 0; i0 < L; i0 += br) {
        const int64_t nr = std::min(br, L - i0), kend = key_end(p, i0, nr);
        for (int64_t j0 = 0; j0 < kend; j0 += kBcMax) {
          const KeyTile t = key_tile<T>(j0, kend);
          const bool masked = tile_needs_mask(p, i0, t);
          // P = exp(Q K^T * scale + mask - lse), recomputed.
          tiles.scores(i0, nr, t, P.data());
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
          tiles.add_dv(i0, nr, t, pd, dva);
          tiles.dp(i0, nr, t, dP.data());
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
          tiles.add_dq_dk(i0, nr, t, dP.data(), dqa, dka);
        }
      }
      for (int64_t i = 0; i < L; ++i) {
        I* d = dq + p.dq_at.at(b, i);
        for (int64_t e = 0; e < E; ++e) d[e] = static_cast<I>(dqa[i * Ep + e] * scale);
      }
      for (int64_t j = 0; j < S; ++j) {
        I* dkr = dk + p.dk_at.at(b, j);
        I* dvr = dv + p.dv_at.at(b, j);
        for (int64_t e = 0; e < E; ++e) dkr[e] = static_cast<I>(dka[j * Ep + e] * tiles.dk_scale);
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
    auto run = [&]<class Tiles>() {
      attention_forward<T, I, Tiles>(static_cast<const I*>(q), static_cast<const I*>(k), static_cast<const I*>(v),
                                     mask, static_cast<I*>(out), static_cast<T*>(lse), p);
    };
#if GR_BF16_PAIRS
    if constexpr (std::is_same_v<I, BFloat16>)
      if (pair_tiles_apply(p)) return run.template operator()<PairForward>();
#endif
    run.template operator()<FloatForward<T, I>>();
  });
}

void attention_backward_cpu(const void* grad_out, const void* q, const void* k, const void* v, const void* mask,
                            const void* out, const void* lse, void* dq, void* dk, void* dv, const AttentionParams& p,
                            ScalarType t) {
  dispatch_attention(t, "scaled_dot_product_attention_backward", [&]<class T, class I>() {
    auto run = [&]<class Tiles>() {
      attention_backward<T, I, Tiles>(static_cast<const I*>(grad_out), static_cast<const I*>(q),
                                      static_cast<const I*>(k), static_cast<const I*>(v), mask,
                                      static_cast<const I*>(out), static_cast<const T*>(lse), static_cast<I*>(dq),
                                      static_cast<I*>(dk), static_cast<I*>(dv), p);
    };
#if GR_BF16_PAIRS
    if constexpr (std::is_same_v<I, BFloat16>)
      if (pair_tiles_apply(p)) return run.template operator()<PairBackward>();
#endif
    run.template operator()<FloatBackward<T, I>>();
  });
}

}  // namespace

GR_REGISTER_KERNEL(attention_stub, kCPU, &attention_cpu);
GR_REGISTER_KERNEL(attention_backward_stub, kCPU, &attention_backward_cpu);

}  // namespace gr::native
