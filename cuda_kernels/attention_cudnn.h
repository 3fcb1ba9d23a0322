// cuDNN's fused attention as the bfloat16/float16 path of scaled_dot_product_attention's CUDA
// kernels (attention.cu): which calls may take it (choose(), a pure host function, tested
// without a device), how gradring's operand layouts become cuDNN's [N, H, rows, cols] strides,
// and the two entry points (attention_cudnn.cpp, built when CMake finds the cuDNN frontend;
// GRADRING_CUDNN_ATTENTION). No cuDNN header here: the frontend's stay in attention_cudnn.cpp.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "core/dtype.h"
#include "core/native/attention/attention.h"

namespace gr::cuda::cudnn_attention {

// Note [cuDNN attention]
// For bfloat16 and float16 the CUDA backend may hand scaled_dot_product_attention to cuDNN's
// fused attention (the frontend's sdpa / sdpa_backward graphs) instead of attention_tc.cu.
// Only calls cuDNN computes exactly as gradring defines them go there (choose()):
// - no dropout: cuDNN's dropout draws from its own Philox stream, not Note [Attention dropout
//   stream], so the backward, the composite and the CPU would disagree with it;
// - no attn_mask (a mask would be a bias tensor with its own layout rules; not mapped yet);
// - causal is top-left aligned on both sides (key j visible to query i when j <= i, as torch's
//   is_causal; cuDNN's set_causal_mask), so L != S is the same rule too;
// - head widths E and Ev multiples of 8 up to 256 (what the frontend accepts on Hopper; its
//   support check refuses narrower limits of other GPUs at graph build);
// - every operand expressible as [N, H, rows, cols] with cols contiguous and no broadcast
//   (cudnn_strides()), rows 16-byte aligned.
// The saved statistics agree: cuDNN's Stats output is the natural-log logsumexp of the scaled
// scores in float32, [B, L] packed, exactly the lse gradring's kernels save, so a forward on
// one path and its backward on the other (the switch flipped between them, or a graph cuDNN
// refused for one pass only) compute the same thing.
// Under use_deterministic_algorithms the backward asks for cuDNN's deterministic algorithm
// (set_deterministic_algorithm: the frontend then computes dQ from a dS workspace with a GEMM
// instead of float atomics, and on Blackwell picks the deterministic engine cuDNN >= 9.18
// has); our own bfloat16/float16 backward has no deterministic version and alerts.
// Graphs are built once per problem and cached (a small LRU per thread); a problem cuDNN
// refuses (validation, support check, plan build) is remembered and runs on our kernels from
// then on, never an error. GRADRING_CUDNN_ATTENTION=0 (or gr::cuda::enable_cudnn_sdp(false))
// keeps everything on our kernels. See docs/cuda.md, "cuDNN attention".

struct Call {
  ScalarType dtype = kFloat32;
  int64_t B = 0, L = 0, S = 0, E = 0, Ev = 0;
  bool causal = false;
  double dropout_p = 0;
  bool mask = false;           // an attn_mask (bool or float) was given
  bool deterministic = false;  // use_deterministic_algorithms is on
  bool enabled = true;         // gr::cuda::cudnn_sdp_enabled()
  bool built = false;          // this build has attention_cudnn.cpp
};

enum class Verdict { kCudnn, kNotBuilt, kDisabled, kDtype, kDropout, kMask, kHeadDim, kEmpty };

inline constexpr int64_t kMaxHeadDim = 256;

// Whether a call goes to cuDNN (kCudnn) or, if not, why not. Layout and alignment are checked
// separately (cudnn_strides, aligned), at the call.
inline Verdict choose(const Call& c) {
  if (!c.built) return Verdict::kNotBuilt;
  if (!c.enabled) return Verdict::kDisabled;
  if (!is_reduced_float(c.dtype)) return Verdict::kDtype;
  if (c.dropout_p > 0) return Verdict::kDropout;
  if (c.mask) return Verdict::kMask;
  if (c.B <= 0 || c.L <= 0 || c.S <= 0) return Verdict::kEmpty;
  auto head_ok = [](int64_t d) { return d > 0 && d % 8 == 0 && d <= kMaxHeadDim; };
  if (!head_ok(c.E) || !head_ok(c.Ev)) return Verdict::kHeadDim;
  return Verdict::kCudnn;  // deterministic too: see Note [cuDNN attention]
}

inline const char* describe(Verdict v) {
  switch (v) {
    case Verdict::kCudnn: return "cuDNN";
    case Verdict::kNotBuilt: return "not built with cuDNN attention";
    case Verdict::kDisabled: return "switched off (GRADRING_CUDNN_ATTENTION=0 / enable_cudnn_sdp(false))";
    case Verdict::kDtype: return "not bfloat16/float16";
    case Verdict::kDropout: return "dropout (gradring's Philox stream)";
    case Verdict::kMask: return "attn_mask";
    case Verdict::kHeadDim: return "head dim not a multiple of 8 up to 256";
    case Verdict::kEmpty: return "empty";
  }
  return "?";
}

// The strides of an operand of `rows` x `cols` (gradring's AttentionLayout over B = N * H batch
// entries) as cuDNN's dims [N, H, rows, cols]: entry (n, h, i, c) of cuDNN is element
// at(n * H + h, i) + c of ours. Layouts whose batch entries are grouped by H (inner == H, the
// model's heads) or not grouped (inner == 1) map; anything else, or a broadcast (stride 0)
// dim longer than 1, does not (nullopt). Dims of length 1 get the stride a packed tensor would
// have (cuDNN checks strides even where they are never used).
inline std::optional<std::array<int64_t, 4>> cudnn_strides(const native::AttentionLayout& at, int64_t N, int64_t H,
                                                           int64_t rows, int64_t cols) {
  int64_t sn, sh;
  if (at.inner == H) {
    sn = at.outer_stride, sh = at.inner_stride;
  } else if (at.inner == 1) {
    sn = H * at.outer_stride, sh = at.outer_stride;
  } else {
    return std::nullopt;
  }
  int64_t sr = at.row_stride;
  if (rows == 1) sr = cols;
  if (H == 1) sh = rows * sr;
  if (N == 1) sn = H * sh;
  if (sr <= 0 || sh <= 0 || sn <= 0) return std::nullopt;
  return std::array<int64_t, 4>{sn, sh, sr, 1};
}

// Whether every row of the operand starts 16-byte aligned (cuDNN's loads are 16-byte vectors):
// the base pointer and every stride in bytes.
inline bool aligned(const void* data, const std::array<int64_t, 4>& strides, size_t element_size) {
  if (reinterpret_cast<uintptr_t>(data) % 16 != 0) return false;
  for (int d = 0; d < 3; ++d)
    if (strides[d] * static_cast<int64_t>(element_size) % 16 != 0) return false;
  return true;
}

// Whether this build has attention_cudnn.cpp (CMake found the cuDNN frontend and cuDNN 9).
bool built();

// The entry points (attention_cudnn.cpp). Each returns false, having done nothing, when cuDNN
// cannot run this problem (its support check, plan build, or a workspace it cannot get): the
// caller runs its own kernel. Preconditions: choose() said kCudnn. Arguments as the kernel
// contract of attention_stub / attention_backward_stub (core/native/attention/attention.h);
// lse is float32 [B, L].
bool forward(const void* q, const void* k, const void* v, void* out, void* lse, const native::AttentionParams& p,
             ScalarType t);
bool backward(const void* grad_out, const void* q, const void* k, const void* v, const void* out, const void* lse,
              void* dq, void* dk, void* dv, const native::AttentionParams& p, ScalarType t);

}  // namespace gr::cuda::cudnn_attention
