// Fused scaled dot-product attention without autograd: the kernel contracts (CPU in
// attention_cpu.cpp, CUDA in cuda_kernels/attention.cu) and the per-element arithmetic both
// share. Shapes: B = flattened batch (batch dims x heads), L queries, S keys, E = query/key
// width, Ev = value width. Neither side ever holds the L x S score matrix.
#pragma once

#include <cstdint>
#include <optional>
#include <tuple>

#include "core/dispatch.h"
#include "core/functors.h"
#include "core/native/dropout.h"
#include "core/philox.h"
#include "core/tensor.h"

namespace gr::native {

// Note [Attention dropout stream]
// Dropout on the attention weights draws from a Generator exactly as native::dropout on a
// contiguous [B, L, S] tensor would: weight (b, i, j) has flat index n = (b * L + i) * S + j
// and keeps its value when dropout_keep(number n % 4 of Philox block offset + n / 4). The
// forward reserves those blocks and saves (seed, offset); the backward regenerates the same
// flags tile by tile, and the unfused composite (double backward, tests) gets the same mask
// from native::dropout with a generator set to (seed, offset).
GR_HOST_DEVICE GR_INLINE uint32_t attention_random(uint64_t seed, uint64_t offset, uint64_t n) {
  Philox4x32 philox(seed, 0, offset + n / 4);
  uint32_t r[4];
  philox.next(r);
  return r[n % 4];
}

template <class T>
GR_HOST_DEVICE GR_INLINE T attention_neg_inf() { return -static_cast<T>(INFINITY); }

enum class AttentionMask : int { None = 0, Bool = 1, Float = 2 };

// The widest head (E and Ev) the CUDA kernels take in bfloat16 and float16 on tensor cores
// (and in float32 on their register tiles); wider heads run on CUDA in float32 (or float64).
inline constexpr int64_t kAttentionCudaTileDim = 128;

// Note [Attention operands in place]
// A model's heads are usually a view: q = qkv.view({N, T, H, D}).transpose(1, 2) has strides
// [T*3C, D, 3C, 1]. Copying q, k, v, grad_out (and the output back) to contiguous [B, L, E]
// cost 8% of a GPT step, so the CPU kernel reads and writes every operand where it lies:
// row i of batch entry b (b = n * inner + h over the flattened batch) starts at
// n * outer_stride + h * inner_stride + i * row_stride, and its E values are contiguous.
// Batch dims that do not fold into two strides, or a non-contiguous last dim, are copied
// first; broadcast batch dims are stride 0 (read in place too). The output (and the input
// gradients) take the query's (the input's) head layout, as torch's, so the model's
// y.transpose(1, 2).reshape({N, T, C}) is a view. The CUDA kernels read and write in place
// too (their tiles load with 16-byte copies where every row start is 16-byte aligned).
struct AttentionLayout {
  int64_t inner = 1;  // batch entries per outer index (the heads of a [N, H, L, E] operand)
  int64_t outer_stride = 0, inner_stride = 0, row_stride = 0;
  GR_HOST_DEVICE int64_t at(int64_t b, int64_t i) const {
    return b / inner * outer_stride + b % inner * inner_stride + i * row_stride;
  }
  // The layout of a contiguous [B, rows, cols] operand.
  static AttentionLayout contiguous(int64_t rows, int64_t cols) { return {1, rows * cols, 0, cols}; }
};

// Everything the kernels need besides the pointers. Operands are laid out as their
// AttentionLayout says (Note [Attention operands in place]); lse [B, L] is contiguous. The
// mask (if any) element (b, i, j) is at mask_offset[b] + i * mask_stride_l + j * mask_stride_s
// (broadcast dims have stride 0).
struct AttentionParams {
  int64_t B, L, S, E, Ev;
  double scale;
  bool causal;  // key j is visible to query i when j <= i (top-left aligned, as torch)
  AttentionMask mask = AttentionMask::None;
  int64_t mask_stride_l = 0, mask_stride_s = 0;
  const int64_t* mask_offset = nullptr;  // B entries, on the kernel's device
  double dropout_p = 0;                  // 0: no dropout
  uint32_t dropout_threshold = 0;        // see dropout_keep
  double dropout_scale = 1;
  uint64_t seed = 0, offset = 0;  // Note [Attention dropout stream]
  AttentionLayout q_at, k_at, v_at, out_at;  // the forward's operands; out_at also the saved output
  AttentionLayout grad_out_at, dq_at, dk_at, dv_at;  // the backward's
};

// Score (b, i, j) after masking: the scaled product plus the float mask (of M values), or
// -inf where the bool mask is false, the causal rule hides j, or j is past S. `x` is already
// scaled.
template <class T, class M = T>
GR_HOST_DEVICE GR_INLINE T attention_masked_score(const AttentionParams& p, T x, const void* mask, int64_t b, int64_t i,
                                                  int64_t j) {
  if (p.causal && j > i) return attention_neg_inf<T>();
  if (p.mask == AttentionMask::Bool) {
    const bool keep = static_cast<const bool*>(mask)[p.mask_offset[b] + i * p.mask_stride_l + j * p.mask_stride_s];
    return keep ? x : attention_neg_inf<T>();
  }
  if (p.mask == AttentionMask::Float)
    return x + static_cast<T>(
                   static_cast<const M*>(mask)[p.mask_offset[b] + i * p.mask_stride_l + j * p.mask_stride_s]);
  return x;
}

// The dropout factor of weight (b, i, j): 0 or 1 / (1 - p). See Note [Attention dropout stream].
template <class T>
GR_HOST_DEVICE GR_INLINE T attention_dropout_factor(const AttentionParams& p, int64_t b, int64_t i, int64_t j) {
  const uint64_t n = static_cast<uint64_t>((b * p.L + i) * p.S + j);
  return dropout_keep(attention_random(p.seed, p.offset, n), p.dropout_threshold) ? static_cast<T>(p.dropout_scale)
                                                                                  : T(0);
}

// Row statistics to the saved logsumexp: max m and sum l of exp(x - m); a row whose every
// key is masked has l == 0 and gets lse = -inf (its output and gradients are 0, as torch).
template <class T>
GR_HOST_DEVICE GR_INLINE T attention_lse(T m, T l) { return l > T(0) ? m + math::log(l) : attention_neg_inf<T>(); }
// exp(x - lse): a weight recomputed from the saved logsumexp (0 for fully masked rows).
// `exp` is the kernel's (the CUDA tile kernels': __expf).
template <class T, class Exp>
GR_HOST_DEVICE GR_INLINE T attention_weight(T x, T lse, Exp exp) {
  return lse == attention_neg_inf<T>() ? T(0) : exp(x - lse);
}
struct AttentionExp {
  template <class T>
  GR_HOST_DEVICE T operator()(T x) const { return math::exp(x); }
};
template <class T>
GR_HOST_DEVICE GR_INLINE T attention_weight(T x, T lse) { return attention_weight(x, lse, AttentionExp()); }

// Forward: out and lse from q, k, v (and the mask's data, or null).
using AttentionFn = void (*)(const void* q, const void* k, const void* v, const void* mask, void* out, void* lse,
                             const AttentionParams& p, ScalarType t);
GR_DECLARE_DISPATCH(AttentionFn, attention_stub);
// Backward (FlashAttention-2): dq, dk, dv from grad_out, the saved out and lse, recomputing
// the weights tile by tile. dq [B, L, E], dk [B, S, E], dv [B, S, Ev] are overwritten.
using AttentionBackwardFn = void (*)(const void* grad_out, const void* q, const void* k, const void* v,
                                     const void* mask, const void* out, const void* lse, void* dq, void* dk, void* dv,
                                     const AttentionParams& p, ScalarType t);
GR_DECLARE_DISPATCH(AttentionBackwardFn, attention_backward_stub);

// What the forward keeps for the backward besides the inputs.
struct AttentionSaved {
  Tensor out, lse;                 // out [..., L, Ev] and lse [..., L] in the broadcast batch shape
  uint64_t seed = 0, offset = 0;  // the dropout stream's position, when dropout_p > 0
};

// Checks the arguments as torch does (shapes, dtypes, mask) and runs the fused forward.
// attn_mask: bool (true = attend) or float of the query's dtype, broadcastable to [..., L, S].
// gen: where dropout draws from (null = the default generator).
AttentionSaved scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                            const Tensor& attn_mask, double dropout_p, bool is_causal,
                                            std::optional<double> scale, Generator* gen = nullptr);
// The gradients of query, key and value (in their own shapes, broadcast batch dims summed).
std::tuple<Tensor, Tensor, Tensor> scaled_dot_product_attention_backward(
    const Tensor& grad_out, const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& attn_mask,
    double dropout_p, bool is_causal, std::optional<double> scale, const AttentionSaved& saved);

}  // namespace gr::native
