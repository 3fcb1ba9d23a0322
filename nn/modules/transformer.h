// The transformer layers as libtorch's: TransformerEncoderLayer, TransformerEncoder and
// TransformerDecoderLayer (post-norm by default; norm_first, batch_first and layer_norm_eps
// as PyTorch's Python options). Submodule names follow PyTorch's state_dict (self_attn,
// linear1, linear2, norm1.., dropout..; layers.<i>, norm). Self-attention runs the fused
// scaled_dot_product_attention (need_weights = false).
#pragma once

#include <functional>
#include <variant>

#include "nn/enum.h"
#include "nn/module.h"
#include "nn/module_holder.h"
#include "nn/modules/attention.h"
#include "nn/modules/basic.h"
#include "nn/modules/linear.h"
#include "nn/modules/normalization.h"

namespace gr::nn {

// kReLU, kGELU or any function (libtorch's activation_t).
using TransformerActivation = std::variant<enumtype::kReLU, enumtype::kGELU, std::function<Tensor(const Tensor&)>>;

struct TransformerEncoderLayerOptions {
  TransformerEncoderLayerOptions(int64_t d_model, int64_t nhead) : d_model_(d_model), nhead_(nhead) {}
  GR_ARG(int64_t, d_model);
  GR_ARG(int64_t, nhead);
  GR_ARG(int64_t, dim_feedforward) = 2048;
  GR_ARG(double, dropout) = 0.1;
  GR_ARG(TransformerActivation, activation) = enumtype::kReLU{};
  GR_ARG(double, layer_norm_eps) = 1e-5;
  GR_ARG(bool, batch_first) = false;
  GR_ARG(bool, norm_first) = false;
  GR_ARG(bool, bias) = true;
};

class TransformerEncoderLayerImpl : public Module {
 public:
  TransformerEncoderLayerImpl(int64_t d_model, int64_t nhead)
      : TransformerEncoderLayerImpl(TransformerEncoderLayerOptions(d_model, nhead)) {}
  explicit TransformerEncoderLayerImpl(const TransformerEncoderLayerOptions& options);
  // src (S, N, E) (or (N, S, E) with batch_first); masks as MultiheadAttention's.
  Tensor forward(const Tensor& src, const Tensor& src_mask = {}, const Tensor& src_key_padding_mask = {});

  TransformerEncoderLayerOptions options;
  MultiheadAttention self_attn = nullptr;
  Linear linear1 = nullptr, linear2 = nullptr;
  Dropout dropout = nullptr, dropout1 = nullptr, dropout2 = nullptr;
  LayerNorm norm1 = nullptr, norm2 = nullptr;
};
GR_MODULE(TransformerEncoderLayer);

struct TransformerDecoderLayerOptions {
  TransformerDecoderLayerOptions(int64_t d_model, int64_t nhead) : d_model_(d_model), nhead_(nhead) {}
  GR_ARG(int64_t, d_model);
  GR_ARG(int64_t, nhead);
  GR_ARG(int64_t, dim_feedforward) = 2048;
  GR_ARG(double, dropout) = 0.1;
  GR_ARG(TransformerActivation, activation) = enumtype::kReLU{};
  GR_ARG(double, layer_norm_eps) = 1e-5;
  GR_ARG(bool, batch_first) = false;
  GR_ARG(bool, norm_first) = false;
  GR_ARG(bool, bias) = true;
};

class TransformerDecoderLayerImpl : public Module {
 public:
  TransformerDecoderLayerImpl(int64_t d_model, int64_t nhead)
      : TransformerDecoderLayerImpl(TransformerDecoderLayerOptions(d_model, nhead)) {}
  explicit TransformerDecoderLayerImpl(const TransformerDecoderLayerOptions& options);
  Tensor forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask = {}, const Tensor& memory_mask = {},
                 const Tensor& tgt_key_padding_mask = {}, const Tensor& memory_key_padding_mask = {});

  TransformerDecoderLayerOptions options;
  MultiheadAttention self_attn = nullptr, multihead_attn = nullptr;
  Linear linear1 = nullptr, linear2 = nullptr;
  Dropout dropout = nullptr, dropout1 = nullptr, dropout2 = nullptr, dropout3 = nullptr;
  LayerNorm norm1 = nullptr, norm2 = nullptr, norm3 = nullptr;
};
GR_MODULE(TransformerDecoderLayer);

struct TransformerEncoderOptions {
  TransformerEncoderOptions(TransformerEncoderLayerOptions encoder_layer, int64_t num_layers)
      : encoder_layer_(std::move(encoder_layer)), num_layers_(num_layers) {}
  GR_ARG(TransformerEncoderLayerOptions, encoder_layer);
  GR_ARG(int64_t, num_layers);
  GR_ARG(LayerNorm, norm) = nullptr;  // applied after the last layer when set
};

// num_layers copies of one encoder layer (identical initial parameters, as libtorch's clones).
class TransformerEncoderImpl : public Module {
 public:
  explicit TransformerEncoderImpl(const TransformerEncoderOptions& options);
  Tensor forward(const Tensor& src, const Tensor& src_mask = {}, const Tensor& src_key_padding_mask = {});

  TransformerEncoderOptions options;
  std::vector<TransformerEncoderLayer> layers;
  LayerNorm norm = nullptr;
};
GR_MODULE(TransformerEncoder);

}  // namespace gr::nn
