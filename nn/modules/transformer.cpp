// Transformer encoder and decoder layers: PyTorch's forward (post-norm, or pre-norm with
// norm_first), self-attention through the fused scaled_dot_product_attention.
#include "nn/modules/transformer.h"

#include "autograd/grad_mode.h"
#include "autograd/ops.h"

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
  GR_CHECK(o.num_layers() > 0, "TransformerEncoder: num_layers must be positive, got ", o.num_layers());
  auto list = register_module("layers", std::make_shared<Module>("gr::nn::ModuleList"));
  for (int64_t i = 0; i < o.num_layers(); ++i) {
    layers.push_back(TransformerEncoderLayer(o.encoder_layer()));
    list->register_module(std::to_string(i), layers.back());
  }
  // The layers start as copies of the first, as libtorch's clones.
  NoGradGuard no_grad;
  const TensorList first = layers[0]->parameters();
  for (size_t i = 1; i < layers.size(); ++i) {
    const TensorList p = layers[i]->parameters();
    for (size_t j = 0; j < p.size(); ++j) p[j].copy_(first[j]);
  }
  if (!o.norm().is_empty()) norm = register_module("norm", o.norm());
}

Tensor TransformerEncoderImpl::forward(const Tensor& src, const Tensor& src_mask, const Tensor& src_key_padding_mask) {
  Tensor x = src;
  for (auto& layer : layers) x = layer->forward(x, src_mask, src_key_padding_mask);
  return norm.is_empty() ? x : norm->forward(x);
}

}  // namespace gr::nn
