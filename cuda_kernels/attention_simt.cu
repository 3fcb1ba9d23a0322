// float32 attention on register tiles (no TF32, as PyTorch by default): the schedule of the
// tensor-core kernels (attention_tc.cu) with FMAs. 128 threads in a 16 x 8 grid: thread
// (rg, cg) computes the scores of rows 4 rg .. 4 rg + 3 with columns cg, cg + 8, ..., reading
// both operands' rows as float4 from padded tiles (row stride Dp + 4: the eight threads of a
// row group read eight rows on distinct banks), and owns columns 4 cg + 32 c .. of the outputs.
// A row's columns lie with 8 adjacent lanes, which shuffle its max and sum. Products whose
// left operand the thread does not hold (P V, dS K) read it back from shared memory.
#include "core/native/attention_flash.h"
#include "cuda_kernels/attention_tiles.cuh"

namespace gr::cuda::attention {
namespace {

using native::AttentionDropoutRow;
using native::OnlineSoftmax;

__device__ __forceinline__ float4 ld4(const float* p) { return *reinterpret_cast<const float4*>(p); }
__device__ __forceinline__ void st4(float* p, float a, float b, float c, float d) {
  *reinterpret_cast<float4*>(p) = make_float4(a, b, c, d);
}
__device__ __forceinline__ float dot4(float4 a, float4 b, float acc) {
  return fmaf(a.w, b.w, fmaf(a.z, b.z, fmaf(a.y, b.y, fmaf(a.x, b.x, acc))));
}
__device__ __forceinline__ float at(float4 v, int r) { return r == 0 ? v.x : r == 1 ? v.y : r == 2 ? v.z : v.w; }

// acc[r][c] += a(row 4 rg + r) . b(row cg + 8 c) over Dp columns: a and b row-major tiles.
// (One step is 4 + NC float4 loads and 16 NC FMAs: enough to overlap; unrolling further only
// spilled the backward's registers.)
template <int Dp, int ld, int NC>
__device__ __forceinline__ void rows_dot(float (&acc)[4][NC], const float* a, const float* b, int rg, int cg) {
#pragma unroll 1
  for (int d = 0; d < Dp; d += 4) {
    float4 av[4], bv[NC];
#pragma unroll
    for (int r = 0; r < 4; ++r) av[r] = ld4(a + (rg * 4 + r) * ld + d);
#pragma unroll
    for (int c = 0; c < NC; ++c) bv[c] = ld4(b + (cg + 8 * c) * ld + d);
#pragma unroll
    for (int r = 0; r < 4; ++r)
#pragma unroll
      for (int c = 0; c < NC; ++c) acc[r][c] = dot4(av[r], bv[c], acc[r][c]);
  }
}

// acc[r][c4][e] += sum over k < K of a[k * lda + 4 g + r] * b[k * ldb + 4 cq + 4 G c4 + e]:
// rows 4 g .. of a product whose left operand is stored transposed (k-major) in shared memory.
template <int K, int NC4, int G, int lda, int ldb>
__device__ __forceinline__ void cols_product(float (&acc)[4][NC4][4], const float* a, const float* b, int g, int cq) {
#pragma unroll 2
  for (int k = 0; k < K; ++k) {
    const float4 av = ld4(a + k * lda + g * 4);
#pragma unroll
    for (int c4 = 0; c4 < NC4; ++c4) {
      const float4 bv = ld4(b + k * ldb + cq * 4 + 4 * G * c4);
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const float x = at(av, r);
        acc[r][c4][0] = fmaf(x, bv.x, acc[r][c4][0]);
        acc[r][c4][1] = fmaf(x, bv.y, acc[r][c4][1]);
        acc[r][c4][2] = fmaf(x, bv.z, acc[r][c4][2]);
        acc[r][c4][3] = fmaf(x, bv.w, acc[r][c4][3]);
      }
    }
  }
}

// Tiles are double-buffered when both buffers fit every architecture built (kSharedBudget).
template <int Dp>
struct Forward {
  static constexpr int Br = 64, Bc = 64, ld = Dp + 4, ldp = Br + 4;
  static constexpr size_t bytes(int stages) { return (size_t(Br + 2 * stages * Bc) * ld + size_t(Bc) * ldp) * 4; }
  static constexpr int stages = bytes(2) <= kSharedBudget ? 2 : 1;
  static constexpr size_t smem = bytes(stages);
};

// (Two blocks per SM still allow 255 registers; without the minimum, ptxas held the 64-wide
// kernel to 128 registers and spilled.)
template <int Dp>
__global__ void __launch_bounds__(kThreads, 2) simt_forward_kernel(ForwardArgs a, AttentionParams p, int64_t n_tiles) {
  using C = Forward<Dp>;
  constexpr int Bc = C::Bc, ld = C::ld, ldp = C::ldp, NC4 = Dp / 32;
  extern __shared__ __align__(16) unsigned char smem[];
  float* qs = reinterpret_cast<float*>(smem);
  float* ks = qs + C::Br * ld;                // [stages][Bc][ld]
  float* vs = ks + C::stages * Bc * ld;       // [stages][Bc][ld]
  float* pt = vs + C::stages * Bc * ld;       // P^T [Bc][ldp]
  const int64_t b = blockIdx.x % p.B, i0 = (n_tiles - 1 - blockIdx.x / p.B) * C::Br;
  const int rg = threadIdx.x / 8, cg = threadIdx.x % 8;
  const int64_t kend = native::attention_key_end(p, i0, C::Br), n_keys = (kend + Bc - 1) / Bc;
  const ForwardLoads<float, C::Br, Bc, Dp, ld> load{a, p, b, qs, ks, vs};
  load.queries(i0);
  if (n_keys > 0) load.keys(0, 0);
  mma::cp_async_commit();

  const float scale = static_cast<float>(p.scale);
  float o[4][NC4][4] = {};
  OnlineSoftmax<float> row[4];
  for (int64_t t = 0; t < n_keys; ++t) {
    const int buf = C::stages == 2 ? static_cast<int>(t & 1) : 0;
    mma::cp_async_wait<0>();
    __syncthreads();  // tile t is in; every thread is done with tile t - 1 and with P^T
    if (C::stages == 2 && t + 1 < n_keys) load.keys(t + 1, buf ^ 1);
    mma::cp_async_commit();
    const float* kb = ks + buf * Bc * ld;
    const float* vb = vs + buf * Bc * ld;
    float s[4][8] = {};
    rows_dot<Dp, ld, 8>(s, qs, kb, rg, cg);
    const int64_t j0 = t * Bc;
    const bool masked = native::attention_tile_masked(p, i0, j0, min(int64_t(Bc), p.S - j0), Bc);
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      float mx = -INFINITY;
#pragma unroll
      for (int c = 0; c < 8; ++c) {
        float x = s[r][c] * scale;
        if (masked) x = tile_score<float>(p, a.mask, x, b, i0 + rg * 4 + r, j0 + cg + 8 * c);
        s[r][c] = x;
        mx = fmaxf(mx, x);
      }
#pragma unroll
      for (int m = 1; m < 8; m *= 2) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, m));
      const float m_new = row[r].next_max(mx);
      float sum = 0;
#pragma unroll
      for (int c = 0; c < 8; ++c) {
        s[r][c] = m_new == -INFINITY ? 0.0f : __expf(s[r][c] - m_new);
        sum += s[r][c];
      }
      const float alpha = m_new == -INFINITY ? 1.0f : row[r].advance(m_new, sum, FastExp());
#pragma unroll
      for (int c4 = 0; c4 < NC4; ++c4)
#pragma unroll
        for (int e = 0; e < 4; ++e) o[r][c4][e] *= alpha;
      if (p.dropout_p > 0) {
        AttentionDropoutRow flags(p, b, i0 + rg * 4 + r);
        const float dscale = static_cast<float>(p.dropout_scale);
#pragma unroll
        for (int c = 0; c < 8; ++c) s[r][c] *= flags.factor(j0 + cg + 8 * c, dscale);
      }
    }
#pragma unroll
    for (int c = 0; c < 8; ++c) st4(pt + (cg + 8 * c) * ldp + rg * 4, s[0][c], s[1][c], s[2][c], s[3][c]);
    __syncthreads();
    cols_product<Bc, NC4, 8, ldp, ld>(o, pt, vb, rg, cg);  // O += P V
    if (C::stages == 1) {
      __syncthreads();  // the single buffer refills
      if (t + 1 < n_keys) load.keys(t + 1, 0);
      mma::cp_async_commit();
    }
  }
  mma::cp_async_wait<0>();
#pragma unroll
  for (int r = 0; r < 4; ++r) {
#pragma unroll
    for (int m = 1; m < 8; m *= 2) row[r].l += __shfl_xor_sync(0xffffffffu, row[r].l, m);
    const int64_t i = i0 + rg * 4 + r;
    if (i >= p.L) continue;
    const float inv = row[r].inv_sum();
    float* out = row_out<float>(a.out, p.out_at, b, i);
#pragma unroll
    for (int c4 = 0; c4 < NC4; ++c4)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int c = cg * 4 + 32 * c4 + e;
        if (c < p.Ev) out[c] = o[r][c4][e] * inv;
      }
    if (cg == 0) a.lse[b * p.L + i] = row[r].lse();
  }
}

// The backward as Note [Tensor-core backward], on register tiles: thread (rg, cg) computes
// S^T and dP^T for keys 4 rg .. and queries cg + 8 c, owns dK and dV of its 4 keys (columns
// 4 cg + 32 c4 ..), and for dQ rows 4 qg .. of the query tile (columns 4 cq + 4 G c4 ..).
// (P Z) and dS are stored query-major and dS^T key-major, so every product reads its left
// operand as broadcast float4.
template <int Dp>
struct Backward {
  static constexpr int Br = Dp == 128 ? 32 : 64, Bc = 64, ld = Dp + 4, ldk = Bc + 4, ldq = Br + 4;
  static constexpr int G = 128 / (Br / 4);  // dQ's column groups
  static constexpr size_t bytes(int stages) {
    return (size_t(2 * Bc + 2 * stages * Br) * ld + size_t(2 * Br) * ldk + size_t(Bc) * ldq + 4 * Br) * 4;
  }
  static constexpr int stages = bytes(2) <= kSharedBudget ? 2 : 1;
  static constexpr size_t smem = bytes(stages);
};

template <int Dp>
__global__ void __launch_bounds__(kThreads, 1) simt_backward_kernel(BackwardArgs a, AttentionParams p) {
  using C = Backward<Dp>;
  constexpr int Br = C::Br, Bc = C::Bc, ld = C::ld, ldk = C::ldk, ldq = C::ldq, NQ = Br / 8, NC4 = Dp / 32;
  constexpr int G = C::G, NQ4 = Dp / (4 * G);
  extern __shared__ __align__(16) unsigned char smem[];
  float* ks = reinterpret_cast<float*>(smem);
  float* vs = ks + Bc * ld;
  float* qs = vs + Bc * ld;                  // [stages][Br][ld]
  float* gs = qs + C::stages * Br * ld;      // [stages][Br][ld]
  float* pzs = gs + C::stages * Br * ld;     // P Z [Br][ldk]
  float* dss = pzs + Br * ldk;               // dS [Br][ldk]
  float* dst = dss + Br * ldk;               // dS^T [Bc][ldq]
  float* lse_s = dst + Bc * ldq;             // [2][Br]
  float* d_s = lse_s + 2 * Br;               // [2][Br]
  const int64_t b = blockIdx.x % p.B, j0 = blockIdx.x / p.B * Bc;
  const int rg = threadIdx.x / 8, cg = threadIdx.x % 8, qg = threadIdx.x / G, cq = threadIdx.x % G;
  const int64_t first = native::attention_query_begin(p, j0) / Br, n_tiles = (p.L + Br - 1) / Br;
  const BackwardLoads<float, Br, Bc, Dp, ld> load{a, p, b, ks, vs, qs, gs, lse_s, d_s};
  if (first < n_tiles) {
    load.keys(j0);
    load.queries(first, 0);
  }
  mma::cp_async_commit();

  const float scale = static_cast<float>(p.scale);
  float dk[4][NC4][4] = {}, dv[4][NC4][4] = {};
  for (int64_t t = first; t < n_tiles; ++t) {
    const int buf = C::stages == 2 ? static_cast<int>((t - first) & 1) : 0;
    mma::cp_async_wait<0>();
    __syncthreads();  // tile t is in; every thread is done with tile t - 1 and its P Z, dS, dS^T
    if (C::stages == 2 && t + 1 < n_tiles) load.queries(t + 1, buf ^ 1);
    mma::cp_async_commit();
    const float* qb = qs + buf * Br * ld;
    const float* gb = gs + buf * Br * ld;
    const float* lse = lse_s + buf * Br;
    const float* dd = d_s + buf * Br;
    const int64_t i0 = t * Br;
    float s[4][NQ] = {}, dp[4][NQ] = {};
    rows_dot<Dp, ld, NQ>(s, ks, qb, rg, cg);   // S^T = K Q^T
    rows_dot<Dp, ld, NQ>(dp, vs, gb, rg, cg);  // dP^T = V dO^T
    const bool masked = native::attention_tile_masked(p, i0, j0, min(int64_t(Bc), p.S - j0), Bc);
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int64_t j = j0 + rg * 4 + r;
#pragma unroll
      for (int c = 0; c < NQ; ++c) {
        const int ii = cg + 8 * c;
        backward_element<float>(p, a.mask, masked, b, i0 + ii, j, lse[ii], dd[ii], s[r][c], dp[r][c]);
        dst[(rg * 4 + r) * ldq + ii] = dp[r][c];
      }
    }
#pragma unroll
    for (int c = 0; c < NQ; ++c) {
      st4(pzs + (cg + 8 * c) * ldk + rg * 4, s[0][c], s[1][c], s[2][c], s[3][c]);
      st4(dss + (cg + 8 * c) * ldk + rg * 4, dp[0][c], dp[1][c], dp[2][c], dp[3][c]);
    }
    __syncthreads();
    cols_product<Br, NC4, 8, ldk, ld>(dv, pzs, gb, rg, cg);  // dV += (P Z)^T dO
    cols_product<Br, NC4, 8, ldk, ld>(dk, dss, qb, rg, cg);  // dK += dS^T Q
    // dQ (the tile's rows) = dS K, in passes of kPass column groups (128 wide heads: one at a
    // time, or dK and dV spill).
    constexpr int kPass = Dp == 128 ? 1 : NQ4;
#pragma unroll
    for (int c0 = 0; c0 < NQ4; c0 += kPass) {
      float dq[4][kPass][4] = {};
      cols_product<Bc, kPass, G, ldq, ld>(dq, dst, ks + 4 * G * c0, qg, cq);
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const int64_t i = i0 + qg * 4 + r;
        if (i >= p.L) continue;
#pragma unroll
        for (int c4 = 0; c4 < kPass; ++c4)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int c = cq * 4 + 4 * G * (c0 + c4) + e;
            if (c < p.E) atomicAdd(a.dq_acc + (b * p.L + i) * p.E + c, dq[r][c4][e]);
          }
      }
    }
    if (C::stages == 1) {
      __syncthreads();  // the single buffer refills
      if (t + 1 < n_tiles) load.queries(t + 1, 0);
      mma::cp_async_commit();
    }
  }
  mma::cp_async_wait<0>();
#pragma unroll
  for (int r = 0; r < 4; ++r) {
    const int64_t j = j0 + rg * 4 + r;
    if (j >= p.S) continue;
    float* dkr = row_out<float>(a.dk, p.dk_at, b, j);
    float* dvr = row_out<float>(a.dv, p.dv_at, b, j);
#pragma unroll
    for (int c4 = 0; c4 < NC4; ++c4)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int c = cg * 4 + 32 * c4 + e;
        if (c < p.E) dkr[c] = dk[r][c4][e] * scale;
        if (c < p.Ev) dvr[c] = dv[r][c4][e];
      }
  }
}

}  // namespace

bool simt_forward(const ForwardArgs& a, const AttentionParams& p, cudaStream_t stream) {
  return with_head_dim(padded_head_dim(p.E, p.Ev), [&]<int Dp>() {
    using C = Forward<Dp>;
    const int64_t n_tiles = (p.L + C::Br - 1) / C::Br;
    return launch(simt_forward_kernel<Dp>, p.B * n_tiles, C::smem, stream, a, p, n_tiles);
  });
}

bool simt_backward(const BackwardArgs& a, const AttentionParams& p, cudaStream_t stream) {
  return with_head_dim(padded_head_dim(p.E, p.Ev), [&]<int Dp>() {
    using C = Backward<Dp>;
    return launch(simt_backward_kernel<Dp>, p.B * ((p.S + C::Bc - 1) / C::Bc), C::smem, stream, a, p);
  });
}

}  // namespace gr::cuda::attention
