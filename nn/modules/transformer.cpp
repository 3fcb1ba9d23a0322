// Transformer layers, stacks and the encoder-decoder: PyTorch's forward (post-norm, or pre-norm
// with norm_first), self-attention through the fused scaled_dot_product_attention.
#include "nn/modules/transformer.h"

#include <limits>

#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "core/factory.h"
#include "nn/init.h"

namespace gr::nn {

namespace {
Tensor activate(const TransformerActivation& a, const Tensor& x) {
  if (std::holds_alternative<enumtype::kReLU>(a)) return relu(x);
  if (std::holds_alternative<enumtype::kGELU>(a)) return gelu(x);
  return std::get<std::function<Tensor(const Tensor&)>>(a)(x);
}

template <class Options>
MultiheadAttention attention(const Options& o) {
  return MultiheadAttention(
      MultiheadAttentionOptions(o.d_model(), o.nhead()).dropout(o.dropout()).bias(o.bias()).batch_first(o.batch_first()));
}
template <class Options>
LayerNorm layer_norm(const Options& o) {
  return LayerNorm(LayerNormOptions({o.d_model()}).eps(o.layer_norm_eps()));
}

// The feed-forward block: linear2(dropout(activation(linear1(x)))).
Tensor feed_forward(Linear& l1, Linear& l2, Dropout& d, const TransformerActivation& a, const Tensor& x) {
  return l2->forward(d->forward(activate(a, l1->forward(x))));
}

// A new module of m's structure holding m's values (libtorch's clone() of the layer and the
// norm a stack is made from: the stack's copies never share tensors with m).
template <class Holder>
Holder copy_of(const Holder& m) {
  Holder copy(m->options);
  const TensorList params = m->parameters();
  if (!params.empty()) {
    copy->to(params[0].scalar_type());
    copy->to(params[0].device());
  }
  copy->load_state_dict(m->state_dict());
  copy->train(m->is_training());
  return copy;
}

// The options of the layers a Transformer builds (PyTorch's nn.Transformer passes these on).
template <class LayerOptions>
LayerOptions layer_options(const TransformerOptions& o) {
  return LayerOptions(o.d_model(), o.nhead())
      .dim_feedforward(o.dim_feedforward())
      .dropout(o.dropout())
      .activation(o.activation())
      .layer_norm_eps(o.layer_norm_eps())
      .batch_first(o.batch_first())
      .norm_first(o.norm_first());
}
}  // namespace

TransformerEncoderLayerImpl::TransformerEncoderLayerImpl(const TransformerEncoderLayerOptions& o)
    : Module("gr::nn::TransformerEncoderLayer"), options(o) {
  self_attn = register_module("self_attn", attention(o));
  linear1 = register_module("linear1", Linear(LinearOptions(o.d_model(), o.dim_feedforward()).bias(o.bias())));
  dropout = register_module("dropout", Dropout(o.dropout()));
  linear2 = register_module("linear2", Linear(LinearOptions(o.dim_feedforward(), o.d_model()).bias(o.bias())));
  norm1 = register_module("norm1", layer_norm(o));
  norm2 = register_module("norm2", layer_norm(o));
  dropout1 = register_module("dropout1", Dropout(o.dropout()));
  dropout2 = register_module("dropout2", Dropout(o.dropout()));
}

Tensor TransformerEncoderLayerImpl::forward(const Tensor& src, const Tensor& src_mask,
                                            const Tensor& src_key_padding_mask) {
  auto sa = [&](const Tensor& x) {
    return dropout1->forward(std::get<0>(self_attn->forward(x, x, x, src_key_padding_mask, false, src_mask)));
  };
  auto ff = [&](const Tensor& x) {
    return dropout2->forward(feed_forward(linear1, linear2, dropout, options.activation(), x));
  };
  Tensor x = src;
  if (options.norm_first()) {
    x = x + sa(norm1->forward(x));
    return x + ff(norm2->forward(x));
  }
  x = norm1->forward(x + sa(x));
  return norm2->forward(x + ff(x));
}

TransformerDecoderLayerImpl::TransformerDecoderLayerImpl(const TransformerDecoderLayerOptions& o)
    : Module("gr::nn::TransformerDecoderLayer"), options(o) {
  self_attn = register_module("self_attn", attention(o));
  multihead_attn = register_module("multihead_attn", attention(o));
  linear1 = register_module("linear1", Linear(LinearOptions(o.d_model(), o.dim_feedforward()).bias(o.bias())));
  dropout = register_module("dropout", Dropout(o.dropout()));
  linear2 = register_module("linear2", Linear(LinearOptions(o.dim_feedforward(), o.d_model()).bias(o.bias())));
  norm1 = register_module("norm1", layer_norm(o));
  norm2 = register_module("norm2", layer_norm(o));
  norm3 = register_module("norm3", layer_norm(o));
  dropout1 = register_module("dropout1", Dropout(o.dropout()));
  dropout2 = register_module("dropout2", Dropout(o.dropout()));
  dropout3 = register_module("dropout3", Dropout(o.dropout()));
}

Tensor TransformerDecoderLayerImpl::forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask,
                                            const Tensor& memory_mask, const Tensor& tgt_key_padding_mask,
                                            const Tensor& memory_key_padding_mask) {
  auto sa = [&](const Tensor& x) {
    return dropout1->forward(std::get<0>(self_attn->forward(x, x, x, tgt_key_padding_mask, false, tgt_mask)));
  };
  auto mha = [&](const Tensor& x) {
    return dropout2->forward(
        std::get<0>(multihead_attn->forward(x, memory, memory, memory_key_padding_mask, false, memory_mask)));
  };
  auto ff = [&](const Tensor& x) {
    return dropout3->forward(feed_forward(linear1, linear2, dropout, options.activation(), x));
  };
  Tensor x = tgt;
  if (options.norm_first()) {
    x = x + sa(norm1->forward(x));
    x = x + mha(norm2->forward(x));
    return x + ff(norm3->forward(x));
  }
  x = norm1->forward(x + sa(x));
  x = norm2->forward(x + mha(x));
  return norm3->forward(x + ff(x));
}

TransformerEncoderImpl::TransformerEncoderImpl(const TransformerEncoderOptions& o)
    : Module("gr::nn::TransformerEncoder"), options(o) {
  GR_CHECK(!o.encoder_layer().is_empty(), "TransformerEncoder: encoder_layer is an empty module holder");
  GR_CHECK(o.num_layers() > 0, "TransformerEncoder: num_layers must be positive, got ", o.num_layers());
  auto list = register_module("layers", std::make_shared<Module>("gr::nn::ModuleList"));
  for (int64_t i = 0; i < o.num_layers(); ++i) {
    layers.push_back(copy_of(o.encoder_layer()));
    list->register_module(std::to_string(i), layers.back());
  }
  if (!o.norm().is_empty()) norm = register_module("norm", copy_of(o.norm()));
}

Tensor TransformerEncoderImpl::forward(const Tensor& src, const Tensor& src_mask, const Tensor& src_key_padding_mask) {
  Tensor x = src;
  for (auto& layer : layers) x = layer->forward(x, src_mask, src_key_padding_mask);
  return norm.is_empty() ? x : norm->forward(x);
}

TransformerDecoderImpl::TransformerDecoderImpl(const TransformerDecoderOptions& o)
    : Module("gr::nn::TransformerDecoder"), options(o) {
  GR_CHECK(!o.decoder_layer().is_empty(), "TransformerDecoder: decoder_layer is an empty module holder");
  GR_CHECK(o.num_layers() > 0, "TransformerDecoder: num_layers must be positive, got ", o.num_layers());
  auto list = register_module("layers", std::make_shared<Module>("gr::nn::ModuleList"));
  for (int64_t i = 0; i < o.num_layers(); ++i) {
    layers.push_back(copy_of(o.decoder_layer()));
    list->register_module(std::to_string(i), layers.back());
  }
  if (!o.norm().is_empty()) norm = register_module("norm", copy_of(o.norm()));
}

Tensor TransformerDecoderImpl::forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask,
                                       const Tensor& memory_mask, const Tensor& tgt_key_padding_mask,
                                       const Tensor& memory_key_padding_mask) {
  Tensor x = tgt;
  for (auto& layer : layers)
    x = layer->forward(x, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask);
  return norm.is_empty() ? x : norm->forward(x);
}

TransformerImpl::TransformerImpl(const TransformerOptions& o) : Module("gr::nn::Transformer"), options(o) {
  auto layer_norm = [&o] { return LayerNorm(LayerNormOptions({o.d_model()}).eps(o.layer_norm_eps())); };
  encoder = o.custom_encoder().is_empty()
                ? TransformerEncoder(TransformerEncoderOptions(layer_options<TransformerEncoderLayerOptions>(o),
                                                               o.num_encoder_layers())
                                         .norm(layer_norm()))
                : copy_of(o.custom_encoder());
  register_module("encoder", encoder);
  decoder = o.custom_decoder().is_empty()
                ? TransformerDecoder(TransformerDecoderOptions(layer_options<TransformerDecoderLayerOptions>(o),
                                                               o.num_decoder_layers())
                                         .norm(layer_norm()))
                : copy_of(o.custom_decoder());
  register_module("decoder", decoder);
  reset_parameters();
}

void TransformerImpl::reset_parameters() {
  for (const Tensor& p : parameters())
    if (p.dim() > 1) init::xavier_uniform_(p);
}

Tensor TransformerImpl::forward(const Tensor& src, const Tensor& tgt, const Tensor& src_mask, const Tensor& tgt_mask,
                                const Tensor& memory_mask, const Tensor& src_key_padding_mask,
                                const Tensor& tgt_key_padding_mask, const Tensor& memory_key_padding_mask) {
  GR_CHECK(src.dim() == 3 && tgt.dim() == 3, "Transformer: src and tgt should have 3 dimensions, but got ", src.dim(),
           " and ", tgt.dim(), " (shapes ", src.sizes(), " and ", tgt.sizes(), ")");
  const int64_t batch = options.batch_first() ? 0 : 1;
  GR_CHECK(src.size(batch) == tgt.size(batch), "Transformer: src and tgt should have equal batch size (at dim ", batch,
           "), but got ", src.size(batch), " and ", tgt.size(batch));
  GR_CHECK(src.size(2) == options.d_model() && tgt.size(2) == options.d_model(),
           "Transformer: src and tgt should have same feature size as d_model (at dim 2), but got ", src.size(2),
           " and ", tgt.size(2), " while d_model is ", options.d_model());
  Tensor memory = encoder->forward(src, src_mask, src_key_padding_mask);
  return decoder->forward(tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask);
}

Tensor TransformerImpl::generate_square_subsequent_mask(int64_t sz) {
  GR_CHECK(sz >= 0, "Transformer::generate_square_subsequent_mask: size must be non-negative, but got ", sz);
  return triu(full({sz, sz}, -std::numeric_limits<float>::infinity()), 1);
}

}  // namespace gr::nn
