// MultiheadAttention: PyTorch's multi_head_attention_forward with the fused
// scaled_dot_product_attention when no weights are asked for.
#include "nn/modules/attention.h"

#include <cmath>

#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "core/factory.h"
#include "nn/init.h"

namespace gr::nn {

namespace {
constexpr const char* kOp = "MultiheadAttention";

// A mask as an additive float mask of `dtype`: bool true (= not attended) becomes -inf.
Tensor additive(const Tensor& mask, ScalarType dtype) {
  if (!mask.defined() || mask.scalar_type() != kBool) return mask;
  return zeros(mask.sizes(), TensorOptions(dtype).device(mask.device())).masked_fill(mask, -INFINITY);
}

// One more (attended) key column at the end of the last dim.
Tensor pad_key(const Tensor& mask) {
  if (!mask.defined()) return mask;
  std::vector<int64_t> shape = mask.sizes().vec();
  shape.back() = 1;
  return cat({mask, zeros(shape, mask.options())}, -1);
}
}  // namespace

MultiheadAttentionImpl::MultiheadAttentionImpl(const MultiheadAttentionOptions& o)
    : Module("gr::nn::MultiheadAttention"), options(o) {
  const int64_t E = o.embed_dim(), H = o.num_heads();
  GR_CHECK(E > 0 && H > 0, kOp, ": embed_dim and num_heads must be positive, got ", E, " and ", H);
  GR_CHECK(E % H == 0, kOp, ": embed_dim must be divisible by num_heads, got ", E, " and ", H);
  GR_CHECK(o.dropout() >= 0 && o.dropout() <= 1, kOp, ": dropout has to be between 0 and 1, but got ", o.dropout());
  head_dim = E / H;
  _qkv_same_embed_dim = o.kdim() == E && o.vdim() == E;
  if (_qkv_same_embed_dim) {
    in_proj_weight = register_parameter("in_proj_weight", empty({3 * E, E}));
  } else {
    q_proj_weight = register_parameter("q_proj_weight", empty({E, E}));
    k_proj_weight = register_parameter("k_proj_weight", empty({E, o.kdim()}));
    v_proj_weight = register_parameter("v_proj_weight", empty({E, o.vdim()}));
  }
  if (o.bias()) in_proj_bias = register_parameter("in_proj_bias", empty({3 * E}));
  out_proj = register_module("out_proj", Linear(LinearOptions(E, E).bias(o.bias())));
  if (o.add_bias_kv()) {
    bias_k = register_parameter("bias_k", empty({1, 1, E}));
    bias_v = register_parameter("bias_v", empty({1, 1, E}));
  }
  reset_parameters();
}

void MultiheadAttentionImpl::reset_parameters() {
  NoGradGuard no_grad;
  if (_qkv_same_embed_dim) {
    init::xavier_uniform_(in_proj_weight);
  } else {
    init::xavier_uniform_(q_proj_weight);
    init::xavier_uniform_(k_proj_weight);
    init::xavier_uniform_(v_proj_weight);
  }
  if (in_proj_bias.defined()) {
    init::constant_(in_proj_bias, 0.0);
    init::constant_(out_proj->bias, 0.0);
  }
  if (bias_k.defined()) {
    init::xavier_normal_(bias_k);
    init::xavier_normal_(bias_v);
  }
}

std::tuple<Tensor, Tensor> MultiheadAttentionImpl::forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                                           const Tensor& key_padding_mask, bool need_weights,
                                                           const Tensor& attn_mask, bool average_attn_weights) {
  const int64_t E = options.embed_dim(), H = options.num_heads(), hd = head_dim;
  GR_CHECK(query.dim() == 3 || query.dim() == 2, kOp, ": expected a 2-D (unbatched) or 3-D query, got ", query.sizes());
  GR_CHECK(key.dim() == query.dim() && value.dim() == query.dim(), kOp,
           ": expected key and value with the query's number of dims, got query ", query.sizes(), ", key ", key.sizes(),
           " and value ", value.sizes());
  const bool batched = query.dim() == 3;
  Tensor q = query, k = key, v = value, kpm = key_padding_mask;
  if (!batched) {
    q = q.unsqueeze(1), k = k.unsqueeze(1), v = v.unsqueeze(1);
    if (kpm.defined()) kpm = kpm.unsqueeze(0);
  } else if (options.batch_first()) {
    q = q.transpose(0, 1), k = k.transpose(0, 1), v = v.transpose(0, 1);
  }
  const int64_t L = q.size(0), N = q.size(1);
  GR_CHECK(q.size(2) == E, kOp, ": was expecting embedding dimension of ", E, ", but got ", q.size(2));
  GR_CHECK(k.size(2) == options.kdim() && v.size(2) == options.vdim(), kOp, ": expected key and value widths ",
           options.kdim(), " and ", options.vdim(), ", got key ", key.sizes(), " and value ", value.sizes());
  GR_CHECK(k.size(0) == v.size(0) && k.size(1) == N && v.size(1) == N, kOp,
           ": key and value must have the same sequence length and the query's batch size, got query ", query.sizes(),
           ", key ", key.sizes(), " and value ", value.sizes());
  // Input projections.
  Tensor wq = _qkv_same_embed_dim ? in_proj_weight.narrow(0, 0, E) : q_proj_weight;
  Tensor wk = _qkv_same_embed_dim ? in_proj_weight.narrow(0, E, E) : k_proj_weight;
  Tensor wv = _qkv_same_embed_dim ? in_proj_weight.narrow(0, 2 * E, E) : v_proj_weight;
  Tensor bq, bk, bv;
  if (in_proj_bias.defined())
    bq = in_proj_bias.narrow(0, 0, E), bk = in_proj_bias.narrow(0, E, E), bv = in_proj_bias.narrow(0, 2 * E, E);
  q = linear(q, wq, bq), k = linear(k, wk, bk), v = linear(v, wv, bv);
  // Masks as additive float masks: attn_mask [L, S] or [N * H, L, S], key_padding_mask [N, S].
  Tensor mask = additive(attn_mask, q.scalar_type()), pad = additive(kpm, q.scalar_type());
  if (mask.defined()) {
    GR_CHECK((mask.dim() == 2 && mask.size(0) == L && mask.size(1) == k.size(0)) ||
                 (mask.dim() == 3 && mask.size(0) == N * H && mask.size(1) == L && mask.size(2) == k.size(0)),
             kOp, ": expected attn_mask of shape [", L, ", ", k.size(0), "] or [", N * H, ", ", L, ", ", k.size(0),
             "], got ", attn_mask.sizes());
  }
  if (pad.defined())
    GR_CHECK(pad.dim() == 2 && pad.size(0) == N && pad.size(1) == k.size(0), kOp,
             ": expected key_padding_mask of shape [", N, ", ", k.size(0), "], got ", key_padding_mask.sizes());
  if (bias_k.defined()) {
    k = cat({k, bias_k.expand({1, N, E})}, 0), v = cat({v, bias_v.expand({1, N, E})}, 0);
    mask = pad_key(mask), pad = pad_key(pad);
  }
  // Heads: (S, N, E) -> (N, H, S, hd).
  auto heads = [&](const Tensor& t) { return t.reshape({t.size(0), N, H, hd}).permute({1, 2, 0, 3}); };
  q = heads(q), k = heads(k), v = heads(v);
  if (options.add_zero_attn()) {
    k = cat({k, zeros({N, H, 1, hd}, k.options())}, 2), v = cat({v, zeros({N, H, 1, hd}, v.options())}, 2);
    mask = pad_key(mask), pad = pad_key(pad);
  }
  const int64_t S = k.size(2);
  Tensor merged;  // broadcastable to [N, H, L, S]
  if (mask.defined()) merged = mask.dim() == 3 ? mask.view({N, H, L, S}) : mask;
  if (pad.defined()) {
    Tensor p = pad.view({N, 1, 1, S});
    merged = merged.defined() ? merged + p : p;
  }
  const double p = is_training() ? options.dropout() : 0.0;
  Tensor out, weights;
  if (!need_weights) {
    out = scaled_dot_product_attention(q, k, v, merged.defined() ? std::optional<Tensor>(merged) : std::nullopt, p);
  } else {
    Tensor s = matmul(q * (1.0 / std::sqrt(static_cast<double>(hd))), k.transpose(-2, -1));
    if (merged.defined()) s = s + merged;
    weights = softmax(s, -1);
    if (p > 0) weights = dropout(weights, p, true);
    out = matmul(weights, v);
    if (average_attn_weights) weights = weights.mean({1});
  }
  out = out_proj->forward(out.permute({2, 0, 1, 3}).reshape({L, N, E}));  // (N, H, L, hd) -> (L, N, E)
  if (!batched) {
    out = out.squeeze(1);
    if (weights.defined()) weights = weights.squeeze(0);
  } else if (options.batch_first()) {
    out = out.transpose(0, 1);
  }
  return {out, weights};
}

}  // namespace gr::nn
