// The transformer modules as libtorch's: TransformerEncoderLayer, TransformerEncoder,
// TransformerDecoderLayer, TransformerDecoder and Transformer (post-norm by default;
// norm_first, batch_first and layer_norm_eps as PyTorch's Python options). Submodule names
// follow PyTorch's state_dict (self_attn, linear1, linear2, norm1.., dropout..; layers.<i>,
// norm; encoder., decoder.). Self-attention runs the fused scaled_dot_product_attention
// (need_weights = false).
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

// The layer is a module whose copies make the stack (libtorch's clones), or the options of one.
struct TransformerEncoderOptions {
  TransformerEncoderOptions(TransformerEncoderLayer encoder_layer, int64_t num_layers)
      : encoder_layer_(std::move(encoder_layer)), num_layers_(num_layers) {}
  TransformerEncoderOptions(const TransformerEncoderLayerOptions& encoder_layer_options, int64_t num_layers)
      : TransformerEncoderOptions(TransformerEncoderLayer(encoder_layer_options), num_layers) {}
  GR_ARG(TransformerEncoderLayer, encoder_layer);
  GR_ARG(int64_t, num_layers);
  GR_ARG(LayerNorm, norm) = nullptr;  // applied (a copy of it) after the last layer when set
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

struct TransformerDecoderOptions {
  TransformerDecoderOptions(TransformerDecoderLayer decoder_layer, int64_t num_layers)
      : decoder_layer_(std::move(decoder_layer)), num_layers_(num_layers) {}
  TransformerDecoderOptions(const TransformerDecoderLayerOptions& decoder_layer_options, int64_t num_layers)
      : TransformerDecoderOptions(TransformerDecoderLayer(decoder_layer_options), num_layers) {}
  GR_ARG(TransformerDecoderLayer, decoder_layer);
  GR_ARG(int64_t, num_layers);
  GR_ARG(LayerNorm, norm) = nullptr;  // applied (a copy of it) after the last layer when set
};

// num_layers copies of one decoder layer, each attending to the same memory.
class TransformerDecoderImpl : public Module {
 public:
  explicit TransformerDecoderImpl(const TransformerDecoderOptions& options);
  // tgt (T, N, E), memory (S, N, E) (batch first with batch_first); masks as the layer's.
  Tensor forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask = {}, const Tensor& memory_mask = {},
                 const Tensor& tgt_key_padding_mask = {}, const Tensor& memory_key_padding_mask = {});

  TransformerDecoderOptions options;
  std::vector<TransformerDecoderLayer> layers;
  LayerNorm norm = nullptr;
};
GR_MODULE(TransformerDecoder);

// libtorch's TransformerOptions; layer_norm_eps, batch_first and norm_first are torch.nn's
// Python options. custom_encoder / custom_decoder replace the default stacks (which end in a
// LayerNorm each, as PyTorch's).
struct TransformerOptions {
  TransformerOptions() = default;
  TransformerOptions(int64_t d_model, int64_t nhead) : d_model_(d_model), nhead_(nhead) {}
  TransformerOptions(int64_t d_model, int64_t nhead, int64_t num_encoder_layers, int64_t num_decoder_layers)
      : d_model_(d_model),
        nhead_(nhead),
        num_encoder_layers_(num_encoder_layers),
        num_decoder_layers_(num_decoder_layers) {}
  GR_ARG(int64_t, d_model) = 512;
  GR_ARG(int64_t, nhead) = 8;
  GR_ARG(int64_t, num_encoder_layers) = 6;
  GR_ARG(int64_t, num_decoder_layers) = 6;
  GR_ARG(int64_t, dim_feedforward) = 2048;
  GR_ARG(double, dropout) = 0.1;
  GR_ARG(TransformerActivation, activation) = enumtype::kReLU{};
  GR_ARG(TransformerEncoder, custom_encoder) = nullptr;
  GR_ARG(TransformerDecoder, custom_decoder) = nullptr;
  GR_ARG(double, layer_norm_eps) = 1e-5;
  GR_ARG(bool, batch_first) = false;
  GR_ARG(bool, norm_first) = false;
};

// The encoder-decoder of "Attention Is All You Need": memory = encoder(src), output =
// decoder(tgt, memory). Parameters of more than one dim start Xavier-uniform, as libtorch's.
class TransformerImpl : public Module {
 public:
  explicit TransformerImpl(const TransformerOptions& options);
  // src (S, N, E), tgt (T, N, E) (batch first with batch_first) -> (T, N, E). Masks: src_mask
  // (S, S), tgt_mask (T, T), memory_mask (T, S); key padding masks (N, S), (N, T), (N, S).
  Tensor forward(const Tensor& src, const Tensor& tgt, const Tensor& src_mask = {}, const Tensor& tgt_mask = {},
                 const Tensor& memory_mask = {}, const Tensor& src_key_padding_mask = {},
                 const Tensor& tgt_key_padding_mask = {}, const Tensor& memory_key_padding_mask = {});
  void reset_parameters();
  // A float (sz, sz) mask: -inf above the diagonal (position i sees j <= i), 0 elsewhere.
  static Tensor generate_square_subsequent_mask(int64_t sz);

  TransformerOptions options;
  TransformerEncoder encoder = nullptr;
  TransformerDecoder decoder = nullptr;
};
GR_MODULE(Transformer);

}  // namespace gr::nn
