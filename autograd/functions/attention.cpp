// scaled_dot_product_attention with backward: the fused kernels of core/native/attention/attention.h
// run the forward and first-order backward passes; under create_graph the backward is the
// unfused composite's, written with gr:: ops, so attention is twice differentiable.
#include <cmath>

#include "autograd/autocast.h"
#include "autograd/function.h"
#include "autograd/ops.h"
#include "core/factory.h"
#include "core/native/attention/attention.h"

namespace gr {

using autograd::record;
using autograd::SavedTensor;

namespace {

// The unfused attention weights from gr:: ops: softmax(q k^T * scale + mask), where rows with
// every key masked are 0 rather than NaN (as the fused kernel and torch). The max is a
// constant shift, so detaching it leaves the gradient exact.
Tensor composite_weights(const Tensor& q, const Tensor& k, const Tensor& mask, bool is_causal,
                         std::optional<double> scale) {
  const int64_t L = q.size(-2), S = k.size(-2);
  const double sc = scale ? *scale : 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
  Tensor s = matmul(q, k.transpose(-2, -1)) * sc;
  const double inf = INFINITY;
  if (is_causal) {
    Tensor hidden = gt(arange(S, TensorOptions(kInt64)).view({1, S}), arange(L, TensorOptions(kInt64)).view({L, 1}));
    s = s.masked_fill(hidden.to(q.device()), -inf);
  }
  if (mask.defined()) s = mask.scalar_type() == kBool ? s.masked_fill(logical_not(mask), -inf) : s + mask;
  Tensor m = amax(s, {-1}, true).detach();
  m = m.masked_fill(isinf(m), 0.0);
  Tensor e = exp(s - m);
  Tensor l = sum(e, {-1}, true);
  return e / l.masked_fill(eq(l, 0.0), 1.0);
}

// The dropout factors (0 or 1 / (1 - p)) of weights shaped like `w`, from the stream at
// (seed, offset): the fused kernel's (Note [Attention dropout stream]).
Tensor dropout_factors(const Tensor& w, double dropout_p, uint64_t seed, uint64_t offset) {
  Generator g(seed);
  g.set_state({seed, offset});
  return native::dropout(ones(w.sizes(), w.options()), dropout_p, &g).first;
}

Tensor composite_forward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, double dropout_p,
                         bool is_causal, std::optional<double> scale) {
  Tensor w = composite_weights(q, k, mask, is_causal, scale);
  if (dropout_p > 0) {  // the blocks the fused forward reserves
    Generator& g = default_generator();
    const uint64_t seed = g.seed(), offset = g.reserve(static_cast<uint64_t>((w.numel() + 3) / 4));
    w = w * dropout_factors(w, dropout_p, seed, offset);
  }
  return matmul(w, v);
}

}  // namespace

Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const std::optional<Tensor>& attn_mask, double dropout_p, bool is_causal,
                                    std::optional<double> scale) {
  GR_AUTOCAST(scaled_dot_product_attention, query, key, value, attn_mask, dropout_p, is_causal,
              scale);
  const Tensor mask = attn_mask ? *attn_mask : Tensor();
  if (mask.defined() && autograd::needs_grad(mask)) {
    // A float mask that wants a gradient: the composite carries it (the fused backward
    // computes those of query, key and value only).
    native::scaled_dot_product_attention(query.detach(), key.detach(), value.detach(), mask.detach(), 0.0,
                                         is_causal, scale);  // argument checks
    return composite_forward(query, key, value, mask, dropout_p, is_causal, scale);
  }
  native::AttentionSaved saved =
      native::scaled_dot_product_attention(query, key, value, mask, dropout_p, is_causal, scale);
  Tensor out = saved.out;
  if (autograd::needs_grad(query, key, value)) {
    SavedTensor sq(query), sk(key), sv(value), so(out, /*is_output=*/true);
    Tensor lse = saved.lse;
    const uint64_t seed = saved.seed, offset = saved.offset;
    // PyTorch's flash-attention nodes: one saved log-sum-exp per row, recomputed probabilities.
    record(query.is_cuda() ? "ScaledDotProductFlashAttentionBackward0" : "ScaledDotProductFlashAttentionForCpuBackward0",
           {query, key, value}, {out},
           [=](const TensorList& g, const std::vector<bool>& needs) {
             Tensor q = sq.unpack(), k = sk.unpack(), v = sv.unpack();
             if (!autograd::needs_grad(g[0], q, k, v)) {
               auto [dq, dk, dv] = native::scaled_dot_product_attention_backward(
                   g[0], q, k, v, mask, dropout_p, is_causal, scale, {so.unpack(), lse, seed, offset});
               return TensorList{dq, dk, dv};
             }
             // create_graph: the composite's backward with gr:: ops (Note [Double backward]):
             // W = softmax(S), Wd = W * Z; dV = Wd^T g, dW = (g V^T) * Z,
             // dS = W * (dW - rowsum(dW * W)), dQ = dS K * scale, dK = dS^T Q * scale.
             const double sc = scale ? *scale : 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
             Tensor w = composite_weights(q, k, mask, is_causal, scale), wd = w;
             Tensor dw = matmul(g[0], v.transpose(-2, -1));
             if (dropout_p > 0) {
               Tensor z = dropout_factors(w, dropout_p, seed, offset);
               wd = w * z;
               dw = dw * z;
             }
             Tensor ds = w * (dw - sum(dw * w, {-1}, true));
             TensorList grads(3);
             if (needs[0]) grads[0] = autograd::sum_to(matmul(ds, k) * sc, q.sizes());
             if (needs[1]) grads[1] = autograd::sum_to(matmul(ds.transpose(-2, -1), q) * sc, k.sizes());
             if (needs[2]) grads[2] = autograd::sum_to(matmul(wd.transpose(-2, -1), g[0]), v.sizes());
             return grads;
           });
  }
  return out;
}

}  // namespace gr
