// Attention on tensor cores for bfloat16 and float16 (FlashAttention-2): mma.sync m16n8k16
// with float accumulators, operand tiles in shared memory through double-buffered cp.async,
// the online softmax in registers (Note [Online softmax]). Heads up to 128 wide (Dp: the
// padded width). Shapes: q [B, L, E], k [B, S, E], v [B, S, Ev] in their layouts, lse [B, L].
//   forward:  a block of 4 warps per 64 queries (16 per warp), key tiles of 64;
//   backward: a block per 64 keys (16 per warp), query tiles of Br; dK and dV in registers,
//             dQ summed into a float32 buffer with atomics (Note [Tensor-core backward]).
#include "core/native/attention_flash.h"
#include "cuda_kernels/attention_tiles.cuh"

namespace gr::cuda::attention {
namespace {

using namespace gr::cuda::mma;
using native::AttentionDropoutRow;
using native::OnlineSoftmax;

template <class T, int Dp>
struct Forward {
  static constexpr int Br = 64, Bc = 64, ld = Dp + 8;  // 8 more: ldmatrix rows on distinct banks
  static constexpr size_t smem = size_t(Br + 4 * Bc) * ld * sizeof(T);  // Q, K[2], V[2]
};

// Block x: batch entry x % B, query tile (heaviest first under causal) n_tiles - 1 - x / B.
template <class T, int Dp>
__global__ void __launch_bounds__(kThreads) tc_forward_kernel(ForwardArgs a, AttentionParams p, int64_t n_tiles) {
  using C = Forward<T, Dp>;
  constexpr int Bc = C::Bc, ld = C::ld;
  extern __shared__ __align__(16) unsigned char smem[];
  T* qs = reinterpret_cast<T*>(smem);
  T* ks = qs + C::Br * ld;  // [2][Bc][ld]
  T* vs = ks + 2 * Bc * ld;  // [2][Bc][ld]
  const int64_t b = blockIdx.x % p.B, i0 = (n_tiles - 1 - blockIdx.x / p.B) * C::Br;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t kend = native::attention_key_end(p, i0, C::Br), n_keys = (kend + Bc - 1) / Bc;
  const ForwardLoads<T, C::Br, Bc, Dp, ld> load{a, p, b, qs, ks, vs};
  load.queries(i0);
  if (n_keys > 0) load.keys(0, 0);
  cp_async_commit();

  const float scale = static_cast<float>(p.scale);
  float o[Dp / 8][4] = {};
  OnlineSoftmax<float> row[2];  // this lane's rows: group and group + 8 of the warp's 16
  uint32_t qf[Dp / 16][4];
  for (int64_t t = 0; t < n_keys; ++t) {
    cp_async_wait<0>();
    __syncthreads();  // tile t is in; every warp is done with tile t - 1, whose buffer refills now
    if (t == 0)
      for (int kk = 0; kk < Dp / 16; ++kk)
        ldmatrix_x4(qf[kk], qs + (warp * 16 + lo_row(lane)) * ld + kk * 16 + lo_col(lane));
    if (t + 1 < n_keys) load.keys(t + 1, (t + 1) & 1);
    cp_async_commit();
    const T* kb = ks + (t & 1) * Bc * ld;
    const T* vb = vs + (t & 1) * Bc * ld;

    float s[Bc / 8][4] = {};  // S = Q K^T: the warp's 16 queries x 64 keys
#pragma unroll
    for (int kk = 0; kk < Dp / 16; ++kk)
#pragma unroll
      for (int np = 0; np < Bc / 16; ++np) {
        uint32_t f[4];
        ldmatrix_x4(f, kb + (np * 16 + hi_row(lane)) * ld + kk * 16 + hi_col(lane));
        mma_pair<T>(s[2 * np], s[2 * np + 1], qf[kk], f);
      }
    const int64_t j0 = t * Bc;
    const bool masked = native::attention_tile_masked(p, i0, j0, min(int64_t(Bc), p.S - j0), Bc);
    float mx[2] = {-INFINITY, -INFINITY};
#pragma unroll
    for (int n = 0; n < Bc / 8; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        float x = s[n][e] * scale;
        if (masked)
          x = tile_score<T>(p, a.mask, x, b, i0 + warp * 16 + c_row(lane, e), j0 + n * 8 + c_col(lane, e));
        s[n][e] = x;
        mx[e >> 1] = fmaxf(mx[e >> 1], x);
      }
    float alpha[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {  // a row's 64 columns lie with the 4 lanes of its quad
      mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 1));
      mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 2));
      const float m_new = row[h].next_max(mx[h]);
      float sum = 0;
#pragma unroll
      for (int n = 0; n < Bc / 8; ++n)
#pragma unroll
        for (int e = 2 * h; e < 2 * h + 2; ++e) {
          s[n][e] = m_new == -INFINITY ? 0.0f : __expf(s[n][e] - m_new);
          sum += s[n][e];
        }
      alpha[h] = m_new == -INFINITY ? 1.0f : row[h].advance(m_new, sum, FastExp());
    }
#pragma unroll
    for (int d = 0; d < Dp / 8; ++d)
#pragma unroll
      for (int e = 0; e < 4; ++e) o[d][e] *= alpha[e >> 1];
    if (p.dropout_p > 0) {
      const float dscale = static_cast<float>(p.dropout_scale);
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        AttentionDropoutRow flags(p, b, i0 + warp * 16 + c_row(lane, 2 * h));
#pragma unroll
        for (int n = 0; n < Bc / 8; ++n)
#pragma unroll
          for (int e = 2 * h; e < 2 * h + 2; ++e) s[n][e] *= flags.factor(j0 + n * 8 + c_col(lane, e), dscale);
      }
    }
    // O += P V: P's accumulators are the A operand (Note [mma.sync fragments]).
#pragma unroll
    for (int kk = 0; kk < Bc / 16; ++kk) {
      uint32_t pa[4];
      c_to_a<T>(pa, s[2 * kk], s[2 * kk + 1]);
#pragma unroll
      for (int dp = 0; dp < Dp / 16; ++dp) {
        uint32_t f[4];
        ldmatrix_x4_trans(f, vb + (kk * 16 + lo_row(lane)) * ld + dp * 16 + lo_col(lane));
        mma_pair<T>(o[2 * dp], o[2 * dp + 1], pa, f);
      }
    }
  }
  cp_async_wait<0>();
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    row[h].l += __shfl_xor_sync(0xffffffffu, row[h].l, 1);
    row[h].l += __shfl_xor_sync(0xffffffffu, row[h].l, 2);
    const int64_t i = i0 + warp * 16 + c_row(lane, 2 * h);
    if (i >= p.L) continue;
    const float inv = row[h].inv_sum();
    T* out = row_out<T>(a.out, p.out_at, b, i);
#pragma unroll
    for (int d = 0; d < Dp / 8; ++d)
#pragma unroll
      for (int e = 2 * h; e < 2 * h + 2; ++e) {
        const int c = d * 8 + c_col(lane, e);
        if (c < p.Ev) out[c] = T(o[d][e] * inv);
      }
    if (quad_of(lane) == 0) a.lse[b * p.L + i] = row[h].lse();
  }
}

// Note [Tensor-core backward]
// A block owns 64 keys (warp w: keys 16w ..), keeps their K and V tiles in shared memory and
// their dK, dV in registers, and walks the query tiles that can see them (causal: from its
// first key on), Q and dO double-buffered. Per query tile, each warp computes the transposed
// products S^T = K Q^T and dP^T = V dO^T (16 keys x Br queries), so P^T, dS^T = P^T * (dP^T * Z
// - D) come out as the A operands of dV += (P Z)^T dO and dK += dS^T Q without a transpose.
// dQ = dS K needs dS with queries as rows: the warps store dS^T to shared memory and read it
// back transposed (ldmatrix .trans), each warp a 16-query slab and a share of the columns, and
// add their part into dq_acc with float atomics (the key blocks of a query meet there).
// Br = 64 queries for heads up to 64 wide, 32 above (registers: dK and dV take Dp / 2 each).
template <class T, int Dp>
struct Backward {
  static constexpr int Br = Dp <= 64 ? 64 : 32, Bc = 64, ld = Dp + 8, lds = Br + 8;
  // K, V; Q[2], dO[2]; dS^T; then lse[2], D[2] as float.
  static constexpr size_t tiles = size_t(2 * Bc + 4 * Br) * ld + size_t(Bc) * lds;
  static constexpr size_t smem = tiles * sizeof(T) + 4 * Br * sizeof(float);
  static_assert(tiles * sizeof(T) % 16 == 0, "the float arrays follow the tiles aligned");
};

// Block x: batch entry x % B, key tile x / B (the longest query walks first under causal).
template <class T, int Dp>
__global__ void __launch_bounds__(kThreads) tc_backward_kernel(BackwardArgs a, AttentionParams p) {
  using C = Backward<T, Dp>;
  using Op = Ops<T>;
  constexpr int Br = C::Br, Bc = C::Bc, ld = C::ld, lds = C::lds;
  constexpr int kSlabs = Br / 16, kSlabCols = Dp / (4 / kSlabs);  // the dQ step's split
  extern __shared__ __align__(16) unsigned char smem[];
  T* ks = reinterpret_cast<T*>(smem);
  T* vs = ks + Bc * ld;
  T* qs = vs + Bc * ld;      // [2][Br][ld]
  T* gs = qs + 2 * Br * ld;  // [2][Br][ld]
  T* dst = gs + 2 * Br * ld;  // dS^T [Bc][lds]
  float* lse_s = reinterpret_cast<float*>(smem + C::tiles * sizeof(T));  // [2][Br]
  float* d_s = lse_s + 2 * Br;                                             // [2][Br]
  const int64_t b = blockIdx.x % p.B, j0 = blockIdx.x / p.B * Bc;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t first = native::attention_query_begin(p, j0) / Br, n_tiles = (p.L + Br - 1) / Br;
  const BackwardLoads<T, Br, Bc, Dp, ld> load{a, p, b, ks, vs, qs, gs, lse_s, d_s};
  if (first < n_tiles) {
    load.keys(j0);
    load.queries(first, 0);
  }
  cp_async_commit();

  const float scale = static_cast<float>(p.scale);
  float dk[Dp / 8][4] = {}, dv[Dp / 8][4] = {};
  for (int64_t t = first; t < n_tiles; ++t) {
    const int buf = (t - first) & 1;
    cp_async_wait<0>();
    __syncthreads();  // tile t is in; every warp is done with tile t - 1 (and its dS^T)
    if (t + 1 < n_tiles) load.queries(t + 1, buf ^ 1);
    cp_async_commit();
    const T* qb = qs + buf * Br * ld;
    const T* gb = gs + buf * Br * ld;
    const float* lse = lse_s + buf * Br;
    const float* dd = d_s + buf * Br;
    const int64_t i0 = t * Br;

    float s[Br / 8][4] = {}, dp[Br / 8][4] = {};  // S^T and dP^T: the warp's 16 keys x Br queries
#pragma unroll
    for (int kk = 0; kk < Dp / 16; ++kk) {
      uint32_t kf[4], vf[4];
      ldmatrix_x4(kf, ks + (warp * 16 + lo_row(lane)) * ld + kk * 16 + lo_col(lane));
      ldmatrix_x4(vf, vs + (warp * 16 + lo_row(lane)) * ld + kk * 16 + lo_col(lane));
#pragma unroll
      for (int np = 0; np < Br / 16; ++np) {
        uint32_t f[4];
        ldmatrix_x4(f, qb + (np * 16 + hi_row(lane)) * ld + kk * 16 + hi_col(lane));
        mma_pair<T>(s[2 * np], s[2 * np + 1], kf, f);
        ldmatrix_x4(f, gb + (np * 16 + hi_row(lane)) * ld + kk * 16 + hi_col(lane));
        mma_pair<T>(dp[2 * np], dp[2 * np + 1], vf, f);
      }
    }
    // P^T = exp(S^T * scale - lse) (into s, times Z under dropout), dS^T = P^T * (dP^T * Z - D)
    // (into dp). Padding queries have lse = +inf: their weights are 0.
    const bool masked = native::attention_tile_masked(p, i0, j0, min(int64_t(Bc), p.S - j0), Bc);
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int64_t j = j0 + warp * 16 + c_row(lane, e);
#pragma unroll
      for (int n = 0; n < Br / 8; ++n) {
        const int ii = n * 8 + c_col(lane, e);
        backward_element<T>(p, a.mask, masked, b, i0 + ii, j, lse[ii], dd[ii], s[n][e], dp[n][e]);
      }
    }
    // dV += (P Z)^T dO, dK += dS^T Q: B operands from the row-major dO and Q tiles (.trans).
#pragma unroll
    for (int kq = 0; kq < Br / 16; ++kq) {
      uint32_t pa[4], da[4];
      c_to_a<T>(pa, s[2 * kq], s[2 * kq + 1]);
      c_to_a<T>(da, dp[2 * kq], dp[2 * kq + 1]);
#pragma unroll
      for (int d = 0; d < Dp / 16; ++d) {
        uint32_t f[4];
        ldmatrix_x4_trans(f, gb + (kq * 16 + lo_row(lane)) * ld + d * 16 + lo_col(lane));
        mma_pair<T>(dv[2 * d], dv[2 * d + 1], pa, f);
        ldmatrix_x4_trans(f, qb + (kq * 16 + lo_row(lane)) * ld + d * 16 + lo_col(lane));
        mma_pair<T>(dk[2 * d], dk[2 * d + 1], da, f);
      }
    }
    // dS^T to shared memory, rounded to T as the products take it.
#pragma unroll
    for (int n = 0; n < Br / 8; ++n)
#pragma unroll
      for (int h = 0; h < 2; ++h)
        *reinterpret_cast<uint32_t*>(dst + (warp * 16 + c_row(lane, 2 * h)) * lds + n * 8 + c_col(lane, 0)) =
            Op::pack(dp[n][2 * h], dp[n][2 * h + 1]);
    __syncthreads();
    // dQ (the tile's queries) += dS K: warp w takes the 16-query slab w % kSlabs and
    // kSlabCols columns from (w / kSlabs) * kSlabCols.
    const int slab = warp % kSlabs, c0 = warp / kSlabs * kSlabCols;
    uint32_t af[Bc / 16][4];
#pragma unroll
    for (int kk = 0; kk < Bc / 16; ++kk)
      ldmatrix_x4_trans(af[kk], dst + (kk * 16 + hi_row(lane)) * lds + slab * 16 + hi_col(lane));
#pragma unroll
    for (int d = 0; d < kSlabCols / 16; ++d) {
      const int cd = c0 + d * 16;
      float acc[2][4] = {};
#pragma unroll
      for (int kk = 0; kk < Bc / 16; ++kk) {
        uint32_t f[4];
        ldmatrix_x4_trans(f, ks + (kk * 16 + lo_row(lane)) * ld + cd + lo_col(lane));
        mma_pair<T>(acc[0], acc[1], af[kk], f);
      }
#pragma unroll
      for (int nt = 0; nt < 2; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int64_t i = i0 + slab * 16 + c_row(lane, e);
          const int c = cd + nt * 8 + c_col(lane, e);
          if (i < p.L && c < p.E) atomicAdd(a.dq_acc + (b * p.L + i) * p.E + c, acc[nt][e]);
        }
    }
  }
  cp_async_wait<0>();
  // dK = dS^T Q * scale and dV for the block's keys.
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    const int64_t j = j0 + warp * 16 + c_row(lane, e);
    if (j >= p.S) continue;
    T* dkr = row_out<T>(a.dk, p.dk_at, b, j);
    T* dvr = row_out<T>(a.dv, p.dv_at, b, j);
#pragma unroll
    for (int d = 0; d < Dp / 8; ++d) {
      const int c = d * 8 + c_col(lane, e);
      if (c < p.E) dkr[c] = T(dk[d][e] * scale);
      if (c < p.Ev) dvr[c] = T(dv[d][e]);
    }
  }
}

template <class T>
bool forward(const ForwardArgs& a, const AttentionParams& p, cudaStream_t stream) {
  return with_head_dim(padded_head_dim(p.E, p.Ev), [&]<int Dp>() {
    using C = Forward<T, Dp>;
    const int64_t n_tiles = (p.L + C::Br - 1) / C::Br;
    return launch(tc_forward_kernel<T, Dp>, p.B * n_tiles, C::smem, stream, a, p, n_tiles);
  });
}

template <class T>
bool backward(const BackwardArgs& a, const AttentionParams& p, cudaStream_t stream) {
  return with_head_dim(padded_head_dim(p.E, p.Ev), [&]<int Dp>() {
    using C = Backward<T, Dp>;
    return launch(tc_backward_kernel<T, Dp>, p.B * ((p.S + C::Bc - 1) / C::Bc), C::smem, stream, a, p);
  });
}

}  // namespace

bool tc_forward(const ForwardArgs& a, const AttentionParams& p, ScalarType t, cudaStream_t stream) {
  return t == kBFloat16 ? forward<BFloat16>(a, p, stream) : forward<Half>(a, p, stream);
}

bool tc_backward(const BackwardArgs& a, const AttentionParams& p, ScalarType t, cudaStream_t stream) {
  return t == kBFloat16 ? backward<BFloat16>(a, p, stream) : backward<Half>(a, p, stream);
}

}  // namespace gr::cuda::attention
