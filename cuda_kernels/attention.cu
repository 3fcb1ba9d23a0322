// CUDA scaled dot-product attention (attention_stub, attention_backward_stub of
// core/native/attention/attention.h). Heads up to kAttentionCudaTileDim wide run on the tiled kernels:
// bfloat16 and float16 on tensor cores (attention_tc.cu), float32 on register tiles
// (attention_simt.cu); bfloat16/float16 calls that cuDNN's fused attention computes exactly go
// to it first (Note [cuDNN attention], attention_cudnn.h). float64, wider float32 heads, and
// devices without the shared memory the
// tiles need run on the general kernels below: a thread per query row (forward, dQ) or key row
// (dK, dV), the other side's rows streaming through shared memory. Scores, masks, dropout
// factors and the logsumexp use attention.h's functions, shared with the CPU kernel; nothing
// L x S is stored. Operands are read and written in their layouts (Note [Attention operands in
// place]).
#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <utility>

#include "core/cuda.h"
#include "core/deterministic.h"
#include "core/factory.h"
#include "core/native/attention/attention.h"
#include "cuda_kernels/attention_cudnn.h"
#include "cuda_kernels/attention_tiles.cuh"
#include "cuda_kernels/cuda_check.h"
#include "cuda_kernels/runtime.h"

namespace gr::cuda {
namespace {

using namespace gr::native;

constexpr int kRows = 64;  // threads per block of the general kernels, one row each

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

// The block copies rows [r0, r0 + n) of an operand (each `cols` wide) into dst[n][cols].
template <class T>
__device__ __forceinline__ void load_rows(T* dst, const T* data, const AttentionLayout& at, int64_t b, int64_t r0,
                                          int64_t n, int64_t cols) {
  const T* base = data + at.at(b, r0);
  for (int64_t x = threadIdx.x; x < n * cols; x += blockDim.x) dst[x] = base[x / cols * at.row_stride + x % cols];
}

// Shapes: q [B, L, E], k [B, S, E], v [B, S, Ev], out [B, L, Ev], lse [B, L]. Block x covers
// batch entry x / nblk, query rows (x % nblk) * kRows ... The output row accumulates in place.
template <class T>
__global__ void attention_forward_kernel(const T* q, const T* k, const T* v, const void* mask, T* out, T* lse,
                                         AttentionParams p, int64_t nblk, int tile) {
  extern __shared__ __align__(16) unsigned char smem[];
  T* ks = reinterpret_cast<T*>(smem);
  T* vs = ks + tile * p.E;
  const int64_t b = blockIdx.x / nblk, i0 = blockIdx.x % nblk * kRows, i = i0 + threadIdx.x;
  const bool active = i < p.L;
  const T* qi = q + p.q_at.at(b, i);
  T* oi = out + p.out_at.at(b, i);
  if (active)
    for (int64_t c = 0; c < p.Ev; ++c) oi[c] = 0;
  T m = attention_neg_inf<T>(), l = 0;
  const T scale = static_cast<T>(p.scale);
  const int64_t kend = attention_key_end(p, i0, kRows);  // uniform per block
  for (int64_t j0 = 0; j0 < kend; j0 += tile) {
    const int64_t nc = min(static_cast<int64_t>(tile), p.S - j0);
    __syncthreads();
    load_rows(ks, k, p.k_at, b, j0, nc, p.E);
    load_rows(vs, v, p.v_at, b, j0, nc, p.Ev);
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
  const T* qi = q + p.q_at.at(b, i);
  const T* gi = go + p.grad_out_at.at(b, i);
  T* dqi = dq + p.dq_at.at(b, i);
  const T scale = static_cast<T>(p.scale);
  T D = 0, li = attention_neg_inf<T>();
  if (active) {
    D = dot(gi, out + p.out_at.at(b, i), p.Ev);
    li = lse[b * p.L + i];
    for (int64_t e = 0; e < p.E; ++e) dqi[e] = 0;
  }
  const int64_t kend = attention_key_end(p, i0, kRows);
  for (int64_t j0 = 0; j0 < kend; j0 += tile) {
    const int64_t nc = min(static_cast<int64_t>(tile), p.S - j0);
    __syncthreads();
    load_rows(ks, k, p.k_at, b, j0, nc, p.E);
    load_rows(vs, v, p.v_at, b, j0, nc, p.Ev);
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
  const T* kj = k + p.k_at.at(b, j);
  const T* vj = v + p.v_at.at(b, j);
  T* dkj = dk + p.dk_at.at(b, j);
  T* dvj = dv + p.dv_at.at(b, j);
  if (active) {
    for (int64_t e = 0; e < p.E; ++e) dkj[e] = 0;
    for (int64_t c = 0; c < p.Ev; ++c) dvj[c] = 0;
  }
  const T scale = static_cast<T>(p.scale);
  // Causal: no query before the block's first key sees any of its keys.
  for (int64_t i0 = attention_query_begin(p, j0b); i0 < p.L; i0 += tile) {
    const int64_t nq = min(static_cast<int64_t>(tile), p.L - i0);
    __syncthreads();
    load_rows(qs, q, p.q_at, b, i0, nq, p.E);
    load_rows(gs, go, p.grad_out_at, b, i0, nq, p.Ev);
    for (int64_t t = threadIdx.x; t < nq; t += blockDim.x) {
      Ds[t] = dot(go + p.grad_out_at.at(b, i0 + t), out + p.out_at.at(b, i0 + t), p.Ev);
      ls[t] = lse[b * p.L + i0 + t];
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

// The tiled backward's first pass: D[b, i] = rowsum(dO * O) in float, a warp per row.
template <class T>
__global__ void row_dot_kernel(const T* go, const T* out, float* D, AttentionParams p) {
  const int64_t row = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (row >= p.B * p.L) return;  // whole warps leave together
  const int64_t b = row / p.L, i = row % p.L;
  const T* g = go + p.grad_out_at.at(b, i);
  const T* o = out + p.out_at.at(b, i);
  float s = 0;
  for (int64_t c = lane; c < p.Ev; c += 32) s += static_cast<float>(g[c]) * static_cast<float>(o[c]);
  for (int m = 16; m > 0; m /= 2) s += __shfl_xor_sync(0xffffffffu, s, m);
  if (lane == 0) D[row] = s;
}

// Its last: dq = dq_acc * scale, in dq's dtype and layout.
template <class T>
__global__ void store_dq_kernel(const float* acc, T* dq, AttentionParams p) {
  const int64_t n = p.B * p.L * p.E;
  for (int64_t x = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; x < n;
       x += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t row = x / p.E, c = x % p.E;
    dq[p.dq_at.at(row / p.L, row % p.L) + c] = T(acc[x] * static_cast<float>(p.scale));
  }
}

template <class T>
void general_forward(const void* q, const void* k, const void* v, const void* mask, void* out, void* lse,
                     const AttentionParams& p, cudaStream_t stream) {
  const int tile = tile_rows<T>(p.E + p.Ev);
  const int64_t nblk = (p.L + kRows - 1) / kRows;
  const size_t shared = static_cast<size_t>(tile) * (p.E + p.Ev) * sizeof(T);
  attention_forward_kernel<T><<<static_cast<unsigned>(p.B * nblk), kRows, shared, stream>>>(
      static_cast<const T*>(q), static_cast<const T*>(k), static_cast<const T*>(v), mask, static_cast<T*>(out),
      static_cast<T*>(lse), p, nblk, tile);
  GR_CUDA_CHECK_LAUNCH();
}

template <class T>
void general_backward(const void* grad_out, const void* q, const void* k, const void* v, const void* mask,
                      const void* out, const void* lse, void* dq, void* dk, void* dv, const AttentionParams& p,
                      cudaStream_t stream) {
  const T *g = static_cast<const T*>(grad_out), *qq = static_cast<const T*>(q), *kk = static_cast<const T*>(k);
  const T *vv = static_cast<const T*>(v), *o = static_cast<const T*>(out), *ls = static_cast<const T*>(lse);
  const int tile = tile_rows<T>(p.E + p.Ev);
  const size_t shared = static_cast<size_t>(tile) * (p.E + p.Ev + 2) * sizeof(T);
  const int64_t qblk = (p.L + kRows - 1) / kRows, kblk = (p.S + kRows - 1) / kRows;
  attention_backward_dq_kernel<T><<<static_cast<unsigned>(p.B * qblk), kRows, shared, stream>>>(
      g, qq, kk, vv, mask, o, ls, static_cast<T*>(dq), p, qblk, tile);
  GR_CUDA_CHECK_LAUNCH();
  attention_backward_dkv_kernel<T><<<static_cast<unsigned>(p.B * kblk), kRows, shared, stream>>>(
      g, qq, kk, vv, mask, o, ls, static_cast<T*>(dk), static_cast<T*>(dv), p, kblk, tile);
  GR_CUDA_CHECK_LAUNCH();
}

// Calls f.template operator()<T>() for a dtype of the tiled kernels and returns its result.
template <class F>
bool dispatch_tiled(ScalarType t, F&& f) {
  if (t == kBFloat16) return f.template operator()<BFloat16>();
  if (t == kFloat16) return f.template operator()<Half>();
  return f.template operator()<float>();
}

// Whether the tiled kernels take these operands (the shared memory is checked at launch).
bool tiled(const AttentionParams& p, ScalarType t) {
  return (t == kFloat32 || is_reduced_float(t)) && attention::padded_head_dim(p.E, p.Ev) > 0;
}

// Every operand's rows 16-byte aligned: the tiles load with cp.async.
bool rows_aligned(std::initializer_list<std::pair<const void*, const AttentionLayout*>> operands, ScalarType t) {
  for (const auto& [data, at] : operands)
    if (!attention::rows_aligned(data, *at, element_size(t))) return false;
  return true;
}

#ifdef GRADRING_CUDNN_ATTENTION
constexpr bool kCudnnAttentionBuilt = true;
#else
constexpr bool kCudnnAttentionBuilt = false;
#endif

// Whether this call may go to cuDNN: Note [cuDNN attention].
[[maybe_unused]] bool cudnn_eligible(const AttentionParams& p, ScalarType t) {
  const cudnn_attention::Call c{t,
                                p.B,
                                p.L,
                                p.S,
                                p.E,
                                p.Ev,
                                p.causal,
                                p.dropout_p,
                                p.mask != AttentionMask::None,
                                are_deterministic_algorithms_enabled(),
                                cudnn_sdp_enabled(),
                                cudnn_attention::built()};
  return cudnn_attention::choose(c) == cudnn_attention::Verdict::kCudnn;
}

void attention_cuda(const void* q, const void* k, const void* v, const void* mask, void* out, void* lse,
                    const AttentionParams& p, ScalarType t) {
#ifdef GRADRING_CUDNN_ATTENTION
  if (cudnn_eligible(p, t) && cudnn_attention::forward(q, k, v, out, lse, p, t)) return;
#endif
  cudaStream_t stream = current_stream();
  if (tiled(p, t)) {
    const attention::ForwardArgs a{q, k, v, mask, out, static_cast<float*>(lse),
                                   rows_aligned({{q, &p.q_at}, {k, &p.k_at}, {v, &p.v_at}}, t)};
    const bool ran = t == kFloat32 ? attention::simt_forward(a, p, stream) : attention::tc_forward(a, p, t, stream);
    if (ran) return;
    GR_CHECK(t == kFloat32, "scaled_dot_product_attention: this device lacks the shared memory of the ", t,
             " attention kernels");
  }
  dispatch_floating(t, "scaled_dot_product_attention",
                    [&]<class T>() { general_forward<T>(q, k, v, mask, out, lse, p, stream); });
}

void attention_backward_cuda(const void* grad_out, const void* q, const void* k, const void* v, const void* mask,
                             const void* out, const void* lse, void* dq, void* dk, void* dv, const AttentionParams& p,
                             ScalarType t) {
#ifdef GRADRING_CUDNN_ATTENTION
  // Before the alert below: cuDNN's backward has a deterministic algorithm.
  if (cudnn_eligible(p, t) && cudnn_attention::backward(grad_out, q, k, v, out, lse, dq, dk, dv, p, t)) return;
#endif
  cudaStream_t stream = current_stream();
  // The tiled backward sums dQ with float atomics (Note [Tensor-core backward]): under
  // use_deterministic_algorithms float32 takes the per-row kernels below (separate dQ and
  // dK/dV passes, no atomics); bfloat16/float16 have no such path and alert, as PyTorch's
  // memory-efficient backward does.
  const bool deterministic = are_deterministic_algorithms_enabled();
  if (deterministic && tiled(p, t) && t != kFloat32) alert_not_deterministic("scaled_dot_product_attention_backward_cuda");
  if (tiled(p, t) && !(deterministic && t == kFloat32)) {
    // D = rowsum(dO * O) first; dQ sums into float32 and is stored at the end.
    const TensorOptions f32 = TensorOptions(kFloat32).device(Device(kCUDA, current_device()));
    Tensor D = empty({p.B * p.L}, f32), dq_acc = empty({p.B * p.L * p.E}, f32);
    GR_CUDA_CHECK(cudaMemsetAsync(dq_acc.data_ptr(), 0, static_cast<size_t>(dq_acc.numel()) * sizeof(float), stream));
    const attention::BackwardArgs a{
        grad_out, q, k, v, mask, static_cast<const float*>(lse), D.data_ptr<float>(), dq_acc.data_ptr<float>(), dk,
        dv, rows_aligned({{grad_out, &p.grad_out_at}, {q, &p.q_at}, {k, &p.k_at}, {v, &p.v_at}}, t)};
    const bool ran = dispatch_tiled(t, [&]<class T>() {
      const unsigned rows_blocks = static_cast<unsigned>((p.B * p.L * 32 + 255) / 256);
      row_dot_kernel<T><<<rows_blocks, 256, 0, stream>>>(static_cast<const T*>(grad_out), static_cast<const T*>(out),
                                                        D.data_ptr<float>(), p);
      GR_CUDA_CHECK_LAUNCH();
      if (!(t == kFloat32 ? attention::simt_backward(a, p, stream) : attention::tc_backward(a, p, t, stream)))
        return false;
      store_dq_kernel<T><<<grid_size(p.B * p.L * p.E, 256), 256, 0, stream>>>(dq_acc.data_ptr<float>(),
                                                                               static_cast<T*>(dq), p);
      GR_CUDA_CHECK_LAUNCH();
      return true;
    });
    if (ran) return;
    GR_CHECK(t == kFloat32, "scaled_dot_product_attention_backward: this device lacks the shared memory of the ", t,
             " attention kernels");
  }
  dispatch_floating(t, "scaled_dot_product_attention_backward", [&]<class T>() {
    general_backward<T>(grad_out, q, k, v, mask, out, lse, dq, dk, dv, p, stream);
  });
}

}  // namespace

bool cudnn_attention::built() { return kCudnnAttentionBuilt; }

namespace attention {
bool allow_shared_memory(const void* kernel, size_t bytes) {
  static std::mutex mutex;
  static std::map<int, int> optin;                  // device -> its largest block opt-in
  static std::set<std::pair<const void*, int>> set;  // (kernel, device) already allowed
  int device = 0;
  GR_CUDA_CHECK(cudaGetDevice(&device));
  std::lock_guard<std::mutex> lock(mutex);
  auto it = optin.find(device);
  if (it == optin.end()) {
    int max = 0;
    GR_CUDA_CHECK(cudaDeviceGetAttribute(&max, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    it = optin.emplace(device, max).first;
  }
  if (bytes > static_cast<size_t>(it->second)) return false;
  if (bytes > (size_t(48) << 10) && !set.count({kernel, device})) {
    GR_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
    set.insert({kernel, device});
  }
  return true;
}
}  // namespace attention

GR_REGISTER_KERNEL(native::attention_stub, kCUDA, &attention_cuda);
GR_REGISTER_KERNEL(native::attention_backward_stub, kCUDA, &attention_backward_cuda);

}  // namespace gr::cuda
