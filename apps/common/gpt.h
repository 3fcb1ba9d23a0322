// The GPT of train_gpt: token and position embeddings, pre-LayerNorm blocks (causal
// self-attention through the fused scaled_dot_product_attention, then a 4x GELU MLP, each
// with a residual), a final LayerNorm and an LM head tied to the token embedding. Parameter
// names are bench/gpt_torch.py's, so safetensors checkpoints load in PyTorch and back.
#pragma once

#include <gradring/gradring.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

namespace gr::apps {

struct GPTConfig {
  int64_t vocab = 256;  // tokens are bytes
  int64_t layers = 4, heads = 4, embd = 128, block = 64;
  double dropout = 0.0;
  // Every block but the last a gr::utils::checkpoint (train_gpt --checkpoint-activations): the
  // forward keeps those blocks' inputs only and backward reruns one block at a time; gradients
  // are the same, bitwise (Note [Non-reentrant checkpoint]). The last block's rerun would come
  // first in backward, right where its activations were dropped: it would cost a block's
  // forward and lower no peak, so it runs plain, as checkpoint_sequential's last segment does.
  bool checkpoint_activations = false;
};

// The presets of issue 17: tiny (4 layers, 4 heads, 128 wide, context 64, batch 12) and small
// (6, 6, 384, 256, batch 8); anything else is refused.
inline GPTConfig gpt_preset(const std::string& name) {
  GR_CHECK(name == "tiny" || name == "small", "GPT: unknown preset '", name, "' (tiny or small)");
  GPTConfig c;
  if (name == "small") c.layers = 6, c.heads = 6, c.embd = 384, c.block = 256;
  return c;
}
// Sequences per micro-batch and rank of a preset.
inline int64_t gpt_preset_batch(const std::string& name) { return name == "small" ? 8 : 12; }

class CausalSelfAttentionImpl : public nn::Module {
 public:
  explicit CausalSelfAttentionImpl(const GPTConfig& c)
      : nn::Module("CausalSelfAttention"), heads(c.heads), dropout(c.dropout) {
    c_attn = register_module("c_attn", nn::Linear(c.embd, 3 * c.embd));
    c_proj = register_module("c_proj", nn::Linear(c.embd, c.embd));
    resid_dropout = register_module("resid_dropout", nn::Dropout(c.dropout));
  }
  Tensor forward(const Tensor& x) {
    const int64_t B = x.size(0), T = x.size(1), C = x.size(2);
    auto qkv = c_attn(x).split(C, 2);
    auto heads_of = [&](const Tensor& t) { return t.view({B, T, heads, C / heads}).transpose(1, 2); };
    Tensor y = scaled_dot_product_attention(heads_of(qkv[0]), heads_of(qkv[1]), heads_of(qkv[2]), {},
                                            is_training() ? dropout : 0.0, /*is_causal=*/true);
    return resid_dropout(c_proj(y.transpose(1, 2).reshape({B, T, C})));
  }
  int64_t heads;
  double dropout;
  nn::Linear c_attn{nullptr}, c_proj{nullptr};
  nn::Dropout resid_dropout{nullptr};
};
GR_MODULE(CausalSelfAttention);

class MLPImpl : public nn::Module {
 public:
  explicit MLPImpl(const GPTConfig& c) : nn::Module("MLP") {
    c_fc = register_module("c_fc", nn::Linear(c.embd, 4 * c.embd));
    c_proj = register_module("c_proj", nn::Linear(4 * c.embd, c.embd));
    dropout = register_module("dropout", nn::Dropout(c.dropout));
  }
  Tensor forward(const Tensor& x) { return dropout(c_proj(gelu(c_fc(x)))); }
  nn::Linear c_fc{nullptr}, c_proj{nullptr};
  nn::Dropout dropout{nullptr};
};
GR_MODULE(MLP);

class BlockImpl : public nn::Module {
 public:
  explicit BlockImpl(const GPTConfig& c) : nn::Module("Block") {
    ln_1 = register_module("ln_1", nn::LayerNorm(nn::LayerNormOptions({c.embd})));
    attn = register_module("attn", CausalSelfAttention(c));
    ln_2 = register_module("ln_2", nn::LayerNorm(nn::LayerNormOptions({c.embd})));
    mlp = register_module("mlp", MLP(c));
  }
  Tensor forward(const Tensor& x) {
    Tensor h = x + attn(ln_1(x));
    return h + mlp(ln_2(h));
  }
  nn::LayerNorm ln_1{nullptr}, ln_2{nullptr};
  CausalSelfAttention attn{nullptr};
  MLP mlp{nullptr};
};
GR_MODULE(Block);

class GPTImpl : public nn::Module {
 public:
  explicit GPTImpl(const GPTConfig& c) : nn::Module("GPT"), config(c) {
    GR_CHECK(c.embd % c.heads == 0, "GPT: the width (", c.embd, ") must be a multiple of the heads (", c.heads, ")");
    wte = register_module("wte", nn::Embedding(c.vocab, c.embd));
    wpe = register_module("wpe", nn::Embedding(c.block, c.embd));
    drop = register_module("drop", nn::Dropout(c.dropout));
    blocks = register_module("blocks", nn::Sequential());
    for (int64_t i = 0; i < c.layers; ++i) blocks->push_back(Block(c));
    ln_f = register_module("ln_f", nn::LayerNorm(nn::LayerNormOptions({c.embd})));
    reset_parameters();
  }

  // GPT-2's initialisation: N(0, 0.02) for every matrix, zero biases, LayerNorm (1, 0), and
  // the projections into the residual stream scaled by 1/sqrt(2 * layers), one per residual
  // add, so the stream's variance does not grow with depth.
  void reset_parameters() {
    NoGradGuard no_grad;
    const double residual_std = 0.02 / std::sqrt(2.0 * static_cast<double>(config.layers));
    for (auto& item : named_parameters()) {
      const std::string& name = item.key();
      Tensor& p = item.value();
      if (name.ends_with("c_proj.weight")) nn::init::normal_(p, 0.0, residual_std);
      else if (p.dim() == 2) nn::init::normal_(p, 0.0, 0.02);
      else if (name.ends_with(".bias")) nn::init::zeros_(p);  // LayerNorm's shifts start at 0 already
    }
  }

  // idx [B, T] int64 -> logits [B, T, vocab].
  Tensor forward(const Tensor& idx) {
    const int64_t T = idx.size(1);
    GR_CHECK(T <= config.block, "GPT: a sequence of ", T, " tokens is longer than the context (", config.block, ")");
    Tensor pos = arange(T, TensorOptions(kInt64).device(idx.device()));
    Tensor x = drop(wte(idx) + wpe(pos));
    x = ln_f(run_blocks(x));
    return linear(x, wte->weight);  // the LM head is the token embedding: x E^T
  }

  // The blocks in order, all but the last checkpointed with config.checkpoint_activations
  // (called as Sequential calls them, so their forward pre-hooks run in the rerun too).
  Tensor run_blocks(Tensor x) {
    if (!config.checkpoint_activations) return blocks->forward(x);
    const size_t n = blocks->size();
    for (size_t i = 0; i + 1 < n; ++i)
      x = utils::checkpoint(utils::CheckpointOptions().name("blocks." + std::to_string(i)),
                            [seq = blocks.ptr(), i](const Tensor& h) { return seq->forward_range(h, i, i + 1); }, x);
    return n > 0 ? blocks->forward_range(x, n - 1, n) : x;
  }

  // Mean cross-entropy of the next-token predictions.
  Tensor loss(const Tensor& logits, const Tensor& targets) const {
    return cross_entropy(logits.reshape({-1, config.vocab}), targets.reshape({-1}));
  }

  // Parameters without the position embedding (nanoGPT's count for the FLOP estimate).
  int64_t num_params() const {
    int64_t n = 0;
    for (const Tensor& p : parameters()) n += p.numel();
    return n - wpe->weight.numel();
  }
  // Training FLOPs per token: 6 per parameter (forward and backward) plus attention's
  // scores and weighted sums, 12 * layers * width * context (PaLM's estimate, appendix B).
  double flops_per_token() const {
    return 6.0 * static_cast<double>(num_params()) +
           12.0 * static_cast<double>(config.layers * config.embd * config.block);
  }

  GPTConfig config;
  nn::Embedding wte{nullptr}, wpe{nullptr};
  nn::Dropout drop{nullptr};
  nn::Sequential blocks{nullptr};
  nn::LayerNorm ln_f{nullptr};
};
GR_MODULE(GPT);

// AdamW (betas 0.9, 0.95) with weight decay on the matrices only: biases and LayerNorm gains
// and shifts are not pulled towards zero. Two param groups, as bench/gpt_torch.py's.
inline std::unique_ptr<optim::AdamW> make_gpt_optimizer(const std::vector<Tensor>& params, double lr,
                                                       double weight_decay) {
  std::vector<Tensor> decay, other;
  for (const Tensor& p : params) (p.dim() >= 2 ? decay : other).push_back(p);
  auto options = [&](double wd) {
    return std::make_unique<optim::AdamWOptions>(optim::AdamWOptions(lr).betas({0.9, 0.95}).weight_decay(wd));
  };
  std::vector<optim::OptimizerParamGroup> groups;
  groups.emplace_back(decay, options(weight_decay));
  groups.emplace_back(other, options(0.0));
  return std::make_unique<optim::AdamW>(std::move(groups), optim::AdamWOptions(lr).betas({0.9, 0.95}));
}
inline std::unique_ptr<optim::AdamW> make_gpt_optimizer(GPT& model, double lr, double weight_decay) {
  return make_gpt_optimizer(model->parameters(), lr, weight_decay);
}

// The learning rate of step `step` (from 0): a linear warmup over `warmup` steps, then a
// cosine decay to `min_lr` at step `steps`.
inline double gpt_lr_at(int64_t step, double lr, int64_t warmup, int64_t steps, double min_lr) {
  if (step < warmup) return lr * static_cast<double>(step + 1) / static_cast<double>(warmup);
  if (step >= steps) return min_lr;
  const double ratio = static_cast<double>(step - warmup) / static_cast<double>(std::max<int64_t>(1, steps - warmup));
  return min_lr + 0.5 * (1.0 + std::cos(M_PI * ratio)) * (lr - min_lr);
}

}  // namespace gr::apps
