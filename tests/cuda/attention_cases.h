// Attention cases shared by the parity suites of gradring's own kernels and of cuDNN's.
#pragma once

#include <gradring/core/native/attention/attention.h>

#include "parity.h"

namespace gr::cuda_test {

// Attention's tolerances against the CPU, forward and backward, by dtype.
struct Tols {
  double fwd, bwd;
};
inline Tols tols(ScalarType t) {
  if (t == kBFloat16) return {2e-2, 5e-2};
  if (t == kFloat16) return {5e-3, 2e-2};
  if (t == kFloat64) return {1e-12, 1e-11};
  return {2e-4, 1e-3};
}

// The GPT's in-place head layout: q, k and v are views of one qkv [N, T, 3C] (rows 3C apart),
// read and written where they lie. Forward and backward (causal, no dropout) on `dev` from
// inputs made by `seed` and `seed + 1`; returns {out, lse, dq, dk, dv}.
inline TensorList gpt_layout_attention(ScalarType t, uint64_t seed, Device dev) {
  namespace N = gr::native;
  const int64_t Nb = 2, T = 75, H = 4, D = 64, C = H * D;
  const Tensor qkv = N::to_device(N::to_dtype(random_tensor({Nb, T, 3 * C}, kFloat32, seed), t), dev);
  const Tensor g = N::to_device(N::to_dtype(random_tensor({Nb, H, T, D}, kFloat32, seed + 1), t), dev);
  auto heads = [&](int part) { return qkv.narrow(2, part * C, C).view({Nb, T, H, D}).transpose(1, 2); };
  const Tensor q = heads(0), k = heads(1), v = heads(2);
  N::AttentionSaved saved = N::scaled_dot_product_attention(q, k, v, Tensor(), 0.0, true, std::nullopt);
  auto [dq, dk, dv] = N::scaled_dot_product_attention_backward(g, q, k, v, Tensor(), 0.0, true, std::nullopt, saved);
  return TensorList{saved.out, saved.lse, dq, dk, dv};
}

}  // namespace gr::cuda_test
