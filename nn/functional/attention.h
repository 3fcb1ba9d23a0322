// gr::nn::functional's attention: scaled_dot_product_attention (the fused op of autograd/ops.h).
#pragma once

#include <optional>

#include "autograd/ops.h"

namespace gr::nn::functional {

inline Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                           const std::optional<Tensor>& attn_mask = {}, double dropout_p = 0.0,
                                           bool is_causal = false, std::optional<double> scale = std::nullopt) {
  return gr::scaled_dot_product_attention(query, key, value, attn_mask, dropout_p, is_causal, scale);
}

}  // namespace gr::nn::functional
