// CUDA scaled dot-product attention (attention_stub, attention_backward_stub of
// core/native/attention/attention.h): a straightforward tiled online softmax. A block of kRows threads
// owns kRows query rows (forward, dQ) or key rows (dK, dV), one row per thread; the other
// side's rows stream through shared memory in tiles. Scores, masks, dropout factors and the
// logsumexp use attention.h's functions, shared with the CPU kernel; nothing L x S is stored.
#include <algorithm>

#include "core/native/attention/attention.h"
#include "cuda_kernels/cuda_check.h"
#include "cuda_kernels/runtime.h"

namespace gr::cuda {
namespace {

using namespace gr::native;

constexpr int kRows = 64;  // threads per block, one row each

// Rows per shared tile so that a tile of width-`cols` rows (plus two per-row values) stays
// within 40 KiB.
template <class T>
int tile_rows(int64_t cols) {
  return static_cast<int>(std::clamp<int64_t>((int64_t(40) << 10) / ((cols + 2) * int64_t(sizeof(T))), 1, 32));
}

template <class T>
__device__ __forceinline__ T dot(const T* a, const T* b, int64_t n) {
  T s = 0;
  for (int64_t e = 0; e < n; ++e) s += a[e] * b[e];
  return s;
}

// The block copies n contiguous values into shared memory.
template <class T>
__device__ __forceinline__ void load_shared(T* dst, const T* src, int64_t n) {
  for (int64_t x = threadIdx.x; x < n; x += blockDim.x) dst[x] = src[x];
}

// Shapes: q [B, L, E], k [B, S, E], v [B, S, Ev], out [B, L, Ev], lse [B, L]. Block x covers
// batch entry x / nblk, query rows (x % nblk) * kRows ...
template <class T>
__global__ void attention_forward_kernel(const T* q, const T* k, const T* v, const void* mask, T* out, T* lse,
                                         AttentionParams p, int64_t nblk, int tile) {
  extern __shared__ __align__(16) unsigned char smem[];
  T* ks = reinterpret_cast<T*>(smem);
  T* vs = ks + tile * p.E;
  const int64_t b = blockIdx.x / nblk, i0 = blockIdx.x % nblk * kRows, i = i0 + threadIdx.x;
  const bool active = i < p.L;
  const T* qi = q + (b * p.L + i) * p.E;
  T* oi = out + (b * p.L + i) * p.Ev;
  if (active)
    for (int64_t c = 0; c < p.Ev; ++c) oi[c] = 0;
  T m = attention_neg_inf<T>(), l = 0;
  const T scale = static_cast<T>(p.scale);
  const int64_t kend = p.causal ? min(p.S, i0 + kRows) : p.S;  // uniform per block
  for (int64_t j0 = 0; j0 < kend; j0 += tile) {
    const int64_t nc = min(static_cast<int64_t>(tile), p.S - j0);
    __syncthreads();
    load_shared(ks, k + (b * p.S + j0) * p.E, nc * p.E);
    load_shared(vs, v + (b * p.S + j0) * p.Ev, nc * p.Ev);
    __syncthreads();
    if (!active) continue;
    for (int64_t jj = 0; jj < nc; ++jj) {
      const T x = attention_masked_score(p, dot(qi, ks + jj * p.E, p.E) * scale, mask, b, i, j0 + jj);
      if (x == attention_neg_inf<T>()) continue;
      if (x > m) {  // a new maximum: rescale what was summed so far
        const T alpha = math::exp(m - x);
        l *= alpha;
        for (int64_t c = 0; c < p.Ev; ++c) oi[c] *= alpha;
        m = x;
      }
      const T w = math::exp(x - m);
      l += w;
      const T wd = p.dropout_p > 0 ? w * attention_dropout_factor<T>(p, b, i, j0 + jj) : w;
      for (int64_t c = 0; c < p.Ev; ++c) oi[c] += wd * vs[jj * p.Ev + c];
    }
  }
  if (active) {
    const T inv = l > T(0) ? T(1) / l : T(0);
    for (int64_t c = 0; c < p.Ev; ++c) oi[c] *= inv;
    lse[b * p.L + i] = attention_lse(m, l);
  }
}

// dQ: a thread per query row i, keys streaming through shared memory.
// dS = P * (dP * Z - D) with D = rowsum(dO * O), dQ = dS K * scale.
template <class T>
__global__ void attention_backward_dq_kernel(const T* go, const T* q, const T* k, const T* v, const void* mask,
                                             const T* out, const T* lse, T* dq, AttentionParams p, int64_t nblk,
                                             int tile) {
  extern __shared__ __align__(16) unsigned char smem[];
  T* ks = reinterpret_cast<T*>(smem);
  T* vs = ks + tile * p.E;
  const int64_t b = blockIdx.x / nblk, i0 = blockIdx.x % nblk * kRows, i = i0 + threadIdx.x;
  const bool active = i < p.L;
  const int64_t row = b * p.L + i;
  const T* qi = q + row * p.E;
  const T* gi = go + row * p.Ev;
  T* dqi = dq + row * p.E;
  const T scale = static_cast<T>(p.scale);
  T D = 0, li = attention_neg_inf<T>();
  if (active) {
    D = dot(gi, out + row * p.Ev, p.Ev);
    li = lse[row];
    for (int64_t e = 0; e < p.E; ++e) dqi[e] = 0;
  }
  const int64_t kend = p.causal ? min(p.S, i0 + kRows) : p.S;
  for (int64_t j0 = 0; j0 < kend; j0 += tile) {
    const int64_t nc = min(static_cast<int64_t>(tile), p.S - j0);
    __syncthreads();
    load_shared(ks, k + (b * p.S + j0) * p.E, nc * p.E);
    load_shared(vs, v + (b * p.S + j0) * p.Ev, nc * p.Ev);
    __syncthreads();
    if (!active || li == attention_neg_inf<T>()) continue;
    for (int64_t jj = 0; jj < nc; ++jj) {
      const T x = attention_masked_score(p, dot(qi, ks + jj * p.E, p.E) * scale, mask, b, i, j0 + jj);
      const T w = attention_weight(x, li);
      if (w == T(0)) continue;
      const T z = p.dropout_p > 0 ? attention_dropout_factor<T>(p, b, i, j0 + jj) : T(1);
      const T ds = w * (dot(gi, vs + jj * p.Ev, p.Ev) * z - D) * scale;
      for (int64_t e = 0; e < p.E; ++e) dqi[e] += ds * ks[jj * p.E + e];
    }
  }
}

// dK and dV: a thread per key row j, queries (with their dO, D and lse) streaming through
// shared memory. dV = (P * Z)^T dO, dK = dS^T Q * scale.
template <class T>
__global__ void attention_backward_dkv_kernel(const T* go, const T* q, const T* k, const T* v, const void* mask,
                                              const T* out, const T* lse, T* dk, T* dv, AttentionParams p,
                                              int64_t nblk, int tile) {
  extern __shared__ __align__(16) unsigned char smem[];
  T* qs = reinterpret_cast<T*>(smem);
  T* gs = qs + tile * p.E;
  T* Ds = gs + tile * p.Ev;
  T* ls = Ds + tile;
  const int64_t b = blockIdx.x / nblk, j0b = blockIdx.x % nblk * kRows, j = j0b + threadIdx.x;
  const bool active = j < p.S;
  const T* kj = k + (b * p.S + j) * p.E;
  const T* vj = v + (b * p.S + j) * p.Ev;
  T* dkj = dk + (b * p.S + j) * p.E;
  T* dvj = dv + (b * p.S + j) * p.Ev;
  if (active) {
    for (int64_t e = 0; e < p.E; ++e) dkj[e] = 0;
    for (int64_t c = 0; c < p.Ev; ++c) dvj[c] = 0;
  }
  const T scale = static_cast<T>(p.scale);
  // Causal: no query before the block's first key sees any of its keys.
  for (int64_t i0 = p.causal ? j0b : 0; i0 < p.L; i0 += tile) {
    const int64_t nq = min(static_cast<int64_t>(tile), p.L - i0);
    __syncthreads();
    load_shared(qs, q + (b * p.L + i0) * p.E, nq * p.E);
    load_shared(gs, go + (b * p.L + i0) * p.Ev, nq * p.Ev);
    for (int64_t t = threadIdx.x; t < nq; t += blockDim.x) {
      const int64_t row = b * p.L + i0 + t;
      Ds[t] = dot(go + row * p.Ev, out + row * p.Ev, p.Ev);
      ls[t] = lse[row];
    }
    __syncthreads();
    if (!active) continue;
    for (int64_t ii = 0; ii < nq; ++ii) {
      if (ls[ii] == attention_neg_inf<T>()) continue;
      const int64_t i = i0 + ii;
      const T x = attention_masked_score(p, dot(qs + ii * p.E, kj, p.E) * scale, mask, b, i, j);
      const T w = attention_weight(x, ls[ii]);
      if (w == T(0)) continue;
      const T z = p.dropout_p > 0 ? attention_dropout_factor<T>(p, b, i, j) : T(1);
      const T* gr_i = gs + ii * p.Ev;
      for (int64_t c = 0; c < p.Ev; ++c) dvj[c] += w * z * gr_i[c];
      const T ds = w * (dot(gr_i, vj, p.Ev) * z - Ds[ii]) * scale;
      for (int64_t e = 0; e < p.E; ++e) dkj[e] += ds * qs[ii * p.E + e];
    }
  }
}

void attention_cuda(const void* q, const void* k, const void* v, const void* mask, void* out, void* lse,
                    const AttentionParams& p, ScalarType t) {
  // These kernels index contiguous [B, ., .] operands; prepare() copies them so on CUDA.
  GR_CHECK(attention_operands_contiguous(p), "scaled_dot_product_attention: internal error: CUDA operands not contiguous");
  dispatch_floating(t, "scaled_dot_product_attention", [&]<class T>() {
    const int tile = tile_rows<T>(p.E + p.Ev);
    const int64_t nblk = (p.L + kRows - 1) / kRows;
    const size_t shared = static_cast<size_t>(tile) * (p.E + p.Ev) * sizeof(T);
    attention_forward_kernel<T><<<static_cast<unsigned>(p.B * nblk), kRows, shared, current_stream()>>>(
        static_cast<const T*>(q), static_cast<const T*>(k), static_cast<const T*>(v), mask, static_cast<T*>(out),
        static_cast<T*>(lse), p, nblk, tile);
    GR_CUDA_CHECK_LAUNCH();
  });
}

void attention_backward_cuda(const void* grad_out, const void* q, const void* k, const void* v, const void* mask,
                             const void* out, const void* lse, void* dq, void* dk, void* dv, const AttentionParams& p,
                             ScalarType t) {
  // These kernels index contiguous [B, ., .] operands; prepare() copies them so on CUDA.
  GR_CHECK(attention_operands_contiguous(p), "scaled_dot_product_attention: internal error: CUDA operands not contiguous");
  dispatch_floating(t, "scaled_dot_product_attention_backward", [&]<class T>() {
    const T *g = static_cast<const T*>(grad_out), *qq = static_cast<const T*>(q), *kk = static_cast<const T*>(k);
    const T *vv = static_cast<const T*>(v), *o = static_cast<const T*>(out), *ls = static_cast<const T*>(lse);
    const int tile = tile_rows<T>(p.E + p.Ev);
    const size_t shared = static_cast<size_t>(tile) * (p.E + p.Ev + 2) * sizeof(T);
    const int64_t qblk = (p.L + kRows - 1) / kRows, kblk = (p.S + kRows - 1) / kRows;
    cudaStream_t stream = current_stream();
    attention_backward_dq_kernel<T><<<static_cast<unsigned>(p.B * qblk), kRows, shared, stream>>>(
        g, qq, kk, vv, mask, o, ls, static_cast<T*>(dq), p, qblk, tile);
    GR_CUDA_CHECK_LAUNCH();
    attention_backward_dkv_kernel<T><<<static_cast<unsigned>(p.B * kblk), kRows, shared, stream>>>(
        g, qq, kk, vv, mask, o, ls, static_cast<T*>(dk), static_cast<T*>(dv), p, kblk, tile);
    GR_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace

GR_REGISTER_KERNEL(native::attention_stub, kCUDA, &attention_cuda);
GR_REGISTER_KERNEL(native::attention_backward_stub, kCUDA, &attention_backward_cuda);

}  // namespace gr::cuda
