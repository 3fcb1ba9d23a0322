// MultiheadAttention as libtorch's (torch::nn::MultiheadAttention): projections packed in
// in_proj_weight [3E, E] (or q/k/v_proj_weight when kdim/vdim differ), out_proj, optional
// bias_k/bias_v and a zero attention column. Inputs (L, N, E), or (N, L, E) with batch_first
// (PyTorch's Python option; libtorch has none), or unbatched (L, E). need_weights = false runs
// the fused scaled_dot_product_attention.
#pragma once

#include <tuple>

#include "nn/module.h"
#include "nn/module_holder.h"
#include "nn/modules/linear.h"
#include "nn/options.h"

namespace gr::nn {

struct MultiheadAttentionOptions {
  MultiheadAttentionOptions(int64_t embed_dim, int64_t num_heads)
      : embed_dim_(embed_dim), num_heads_(num_heads), kdim_(embed_dim), vdim_(embed_dim) {}
  GR_ARG(int64_t, embed_dim);
  GR_ARG(int64_t, num_heads);
  GR_ARG(double, dropout) = 0.0;
  GR_ARG(bool, bias) = true;
  GR_ARG(bool, add_bias_kv) = false;
  GR_ARG(bool, add_zero_attn) = false;
  GR_ARG(int64_t, kdim);
  GR_ARG(int64_t, vdim);
  GR_ARG(bool, batch_first) = false;
};

class MultiheadAttentionImpl : public Module {
 public:
  MultiheadAttentionImpl(int64_t embed_dim, int64_t num_heads)
      : MultiheadAttentionImpl(MultiheadAttentionOptions(embed_dim, num_heads)) {}
  explicit MultiheadAttentionImpl(const MultiheadAttentionOptions& options);
  // Returns (attn_output, attn_weights). key_padding_mask [N, S] and attn_mask [L, S] or
  // [N * num_heads, L, S]: bool (true = NOT attended, as PyTorch's) or float (added).
  // attn_weights are undefined unless need_weights; averaged over heads when
  // average_attn_weights ([N, L, S]), else [N, num_heads, L, S].
  std::tuple<Tensor, Tensor> forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                     const Tensor& key_padding_mask = {}, bool need_weights = true,
                                     const Tensor& attn_mask = {}, bool average_attn_weights = true);
  // xavier_uniform_ projections, zero biases, xavier_normal_ bias_k/bias_v (PyTorch's).
  void reset_parameters();

  MultiheadAttentionOptions options;
  bool _qkv_same_embed_dim;
  int64_t head_dim;
  Tensor in_proj_weight, in_proj_bias, bias_k, bias_v, q_proj_weight, k_proj_weight, v_proj_weight;
  Linear out_proj = nullptr;
};
GR_MODULE(MultiheadAttention);

}  // namespace gr::nn
