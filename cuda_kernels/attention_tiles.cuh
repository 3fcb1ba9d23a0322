// What the tiled CUDA attention kernels share (tensor cores in attention_tc.cu, float32 register
// tiles in attention_simt.cu): their arguments, the loads of operand rows into shared-memory
// tiles (asynchronous 16-byte copies, zero-filled past the operand's rows and columns), the
// per-row loads of the backward's logsumexp and D, and the launch helpers. Operands are read
// where they lie (Note [Attention operands in place]). See cuda_kernels/attention.cu.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "core/native/attention.h"
#include "core/native/attention_flash.h"
#include "cuda_kernels/attention_mma.cuh"
#include "cuda_kernels/cuda_check.h"

namespace gr::cuda::attention {

using native::AttentionLayout;
using native::AttentionParams;

// Threads per block of every tile kernel: 4 warps.
inline constexpr int kThreads = 128;

// The forward's and the backward's pointers. lse [B, L] and D [B, L] (rowsum(dO * O)) are
// float32; dq_acc [B, L, E] is the float32 sum of dS K over key blocks (scaled and stored in
// dq's layout and dtype afterwards). vec: every operand row starts 16-byte aligned, so tiles
// load with cp.async (else element by element).
struct ForwardArgs {
  const void *q, *k, *v, *mask;
  void* out;
  float* lse;
  bool vec;
};
struct BackwardArgs {
  const void *go, *q, *k, *v, *mask;
  const float *lse, *D;
  float* dq_acc;
  void *dk, *dv;
  bool vec;
};

// Row r of batch entry b of an operand: base + r * stride.
template <class T>
struct Rows {
  const T* base;
  int64_t stride;
  __device__ const T* operator[](int64_t r) const { return base + r * stride; }
};
template <class T>
__device__ __forceinline__ Rows<T> rows_of(const void* data, const AttentionLayout& at, int64_t b) {
  return {static_cast<const T*>(data) + at.at(b, 0), at.row_stride};
}
template <class T>
__device__ __forceinline__ T* row_out(void* data, const AttentionLayout& at, int64_t b, int64_t r) {
  return static_cast<T*>(data) + at.at(b, r);
}

// Rows [r0, r0 + R) of an operand with `rows` rows and `cols` columns into the shared tile
// s[R][ld] (Dp columns used), zeros past its rows and columns. With vec the copies are
// asynchronous (the caller commits and waits); else plain loads and stores.
template <class T, int R, int Dp, int ld, int kThreads>
__device__ __forceinline__ void load_tile(T* s, const Rows<T>& src, int64_t r0, int64_t rows, int64_t cols, bool vec) {
  constexpr int kChunk = 16 / static_cast<int>(sizeof(T)), kChunks = Dp / kChunk;
  static_assert(Dp % kChunk == 0 && ld % kChunk == 0, "tile rows must be whole 16-byte chunks");
  if (vec) {
    for (int x = threadIdx.x; x < R * kChunks; x += kThreads) {
      const int r = x / kChunks, c = x % kChunks * kChunk;
      const int64_t left = r0 + r < rows ? cols - c : 0;
      const int bytes = left <= 0 ? 0 : (left >= kChunk ? 16 : static_cast<int>(left * sizeof(T)));
      mma::cp_async16(s + r * ld + c, bytes > 0 ? src[r0 + r] + c : src.base, bytes);
    }
  } else {
    for (int x = threadIdx.x; x < R * Dp; x += kThreads) {
      const int r = x / Dp, c = x % Dp;
      s[r * ld + c] = r0 + r < rows && c < cols ? src[r0 + r][c] : T(0.0f);
    }
  }
}

// The backward's per-query values of rows [i0, i0 + R): the logsumexp (+inf past L, so the
// recomputed weights of padding rows are exp(x - inf) = 0) and D (0 past L).
template <int R>
__device__ __forceinline__ void load_row_stats(float* ls, float* ds, const BackwardArgs& a, const AttentionParams& p,
                                               int64_t b, int64_t i0) {
  for (int r = threadIdx.x; r < R; r += blockDim.x) {
    const int64_t i = i0 + r;
    ls[r] = i < p.L ? a.lse[b * p.L + i] : INFINITY;
    ds[r] = i < p.L ? a.D[b * p.L + i] : 0.0f;
  }
}

// The forward kernels' loads: a query tile's Q (Br rows from i0), and key tile t's K and V
// (Bc rows) into buffer `buf` of each.
template <class T, int Br, int Bc, int Dp, int ld>
struct ForwardLoads {
  const ForwardArgs& a;
  const AttentionParams& p;
  int64_t b;
  T *qs, *ks, *vs;
  __device__ __forceinline__ void queries(int64_t i0) const {
    load_tile<T, Br, Dp, ld, kThreads>(qs, rows_of<T>(a.q, p.q_at, b), i0, p.L, p.E, a.vec);
  }
  __device__ __forceinline__ void keys(int64_t t, int buf) const {
    load_tile<T, Bc, Dp, ld, kThreads>(ks + buf * Bc * ld, rows_of<T>(a.k, p.k_at, b), t * Bc, p.S, p.E, a.vec);
    load_tile<T, Bc, Dp, ld, kThreads>(vs + buf * Bc * ld, rows_of<T>(a.v, p.v_at, b), t * Bc, p.S, p.Ev, a.vec);
  }
};

// The backward kernels' loads (Note [Tensor-core backward]): a key block's K and V tiles
// (Bc rows, once), and query tile t's Q and dO tiles (Br rows) with its rows' lse and D into
// buffer `buf` of each.
template <class T, int Br, int Bc, int Dp, int ld>
struct BackwardLoads {
  const BackwardArgs& a;
  const AttentionParams& p;
  int64_t b;
  T *ks, *vs, *qs, *gs;
  float *lse_s, *d_s;
  __device__ __forceinline__ void keys(int64_t j0) const {
    load_tile<T, Bc, Dp, ld, kThreads>(ks, rows_of<T>(a.k, p.k_at, b), j0, p.S, p.E, a.vec);
    load_tile<T, Bc, Dp, ld, kThreads>(vs, rows_of<T>(a.v, p.v_at, b), j0, p.S, p.Ev, a.vec);
  }
  __device__ __forceinline__ void queries(int64_t t, int buf) const {
    load_tile<T, Br, Dp, ld, kThreads>(qs + buf * Br * ld, rows_of<T>(a.q, p.q_at, b), t * Br, p.L, p.E, a.vec);
    load_tile<T, Br, Dp, ld, kThreads>(gs + buf * Br * ld, rows_of<T>(a.go, p.grad_out_at, b), t * Br, p.L, p.Ev,
                                       a.vec);
    load_row_stats<Br>(lse_s + buf * Br, d_s + buf * Br, a, p, b, t * Br);
  }
};

// Score x (scaled) of query i, key j after masking, in a tile that needs it (attention_tile_masked):
// -inf past S, and -inf past L too (no mask is read there).
template <class M>
__device__ __forceinline__ float tile_score(const AttentionParams& p, const void* mask, float x, int64_t b, int64_t i,
                                            int64_t j) {
  if (i >= p.L || j >= p.S) return -INFINITY;
  return native::attention_masked_score<float, M>(p, x, mask, b, i, j);
}

// The weights' exp on the multi-function unit (Note [Online softmax]).
struct FastExp {
  __device__ __forceinline__ float operator()(float x) const { return __expf(x); }
};

// One element (query i, key j) of a backward tile, in place: the raw score s becomes P Z (the
// weight recomputed from the query's lse, times its dropout factor) and dP becomes dS =
// P (dP Z - D). `masked`: the tile needs per-element masking (attention_tile_masked).
template <class M>
__device__ __forceinline__ void backward_element(const AttentionParams& p, const void* mask, bool masked, int64_t b,
                                                 int64_t i, int64_t j, float lse, float D, float& s, float& dp) {
  float x = s * static_cast<float>(p.scale);
  if (masked) x = tile_score<M>(p, mask, x, b, i, j);
  const float w = native::attention_weight(x, lse, FastExp());
  const float z =
      p.dropout_p > 0 ? native::AttentionDropoutRow(p, b, i).factor(j, static_cast<float>(p.dropout_scale)) : 1.0f;
  s = w * z;
  dp = w * (dp * z - D);
}

// Whether row starts of an operand (data, layout) are all 16-byte aligned.
inline bool rows_aligned(const void* data, const AttentionLayout& at, size_t elem) {
  const auto aligned = [&](int64_t stride) { return stride * static_cast<int64_t>(elem) % 16 == 0; };
  return reinterpret_cast<uintptr_t>(data) % 16 == 0 && aligned(at.row_stride) && aligned(at.outer_stride) &&
         (at.inner == 1 || aligned(at.inner_stride));
}

// Lets `kernel` use `bytes` of dynamic shared memory on the current device (past the default
// 48 KiB: once per kernel and device); false when the device has less (attention.cu).
bool allow_shared_memory(const void* kernel, size_t bytes);
template <class Kernel>
bool allow_shared(Kernel* kernel, size_t bytes) {
  return allow_shared_memory(reinterpret_cast<const void*>(kernel), bytes);
}

// The padded head width of the tile kernels: the smallest of 32, 64, 96, 128 that holds E and
// Ev (0 when neither fits).
inline int padded_head_dim(int64_t E, int64_t Ev) {
  const int64_t w = E > Ev ? E : Ev;
  for (int d : {32, 64, 96, 128})
    if (w <= d) return d;
  return 0;
}
// Returns f.template operator()<Dp>() for Dp = padded_head_dim (which must be nonzero).
template <class F>
auto with_head_dim(int Dp, F&& f) {
  switch (Dp) {
    case 32: return f.template operator()<32>();
    case 64: return f.template operator()<64>();
    case 96: return f.template operator()<96>();
    default: return f.template operator()<128>();
  }
}

// Launches a tile kernel on `blocks` blocks of kThreads with `smem` bytes of dynamic shared
// memory on `stream`; false (nothing launched) when the device has less.
template <class... Params, class... Args>
bool launch(void (*kernel)(Params...), int64_t blocks, size_t smem, cudaStream_t stream, Args&&... args) {
  if (!allow_shared(kernel, smem)) return false;
  kernel<<<static_cast<unsigned>(blocks), kThreads, smem, stream>>>(args...);
  GR_CUDA_CHECK_LAUNCH();
  return true;
}

// The smallest opt-in shared memory of the architectures built (sm_80: 163 KiB): a kernel
// whose double-buffered tiles need more keeps one buffer, so every build launches everywhere.
inline constexpr size_t kSharedBudget = 166912;

// The launchers (attention_tc.cu, attention_simt.cu). False when the device lacks the shared
// memory the kernel needs (the caller then runs the general kernels).
bool tc_forward(const ForwardArgs& a, const AttentionParams& p, ScalarType t, cudaStream_t stream);
bool tc_backward(const BackwardArgs& a, const AttentionParams& p, ScalarType t, cudaStream_t stream);
bool simt_forward(const ForwardArgs& a, const AttentionParams& p, cudaStream_t stream);
bool simt_backward(const BackwardArgs& a, const AttentionParams& p, cudaStream_t stream);

}  // namespace gr::cuda::attention
