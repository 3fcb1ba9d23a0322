// scaled_dot_product_attention around the fused kernels: torch's argument checks, the
// broadcast of batch dims, the mask's layout and the dropout stream's position.
#include "core/native/attention.h"

#include <cmath>

#include "core/factory.h"
#include "core/native/copy.h"
#include "core/native/reduce.h"
#include "core/native/shape.h"
#include "core/native/strided_loop.h"

namespace gr::native {

namespace {

constexpr const char* kOp = "scaled_dot_product_attention";

std::vector<int64_t> batch_dims(const Tensor& t) { return {t.sizes().begin(), t.sizes().end() - 2}; }

// The inputs as contiguous [B, ., .] tensors (broadcast batch dims flattened), the kernel
// parameters, and the mask's per-batch offsets on the inputs' device.
struct Prepared {
  std::vector<int64_t> batch;  // the broadcast batch shape
  Tensor q, k, v, mask, mask_offset;
  AttentionParams p;
};

Prepared prepare(const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& attn_mask,
                 double dropout_p, bool is_causal, std::optional<double> scale) {
  GR_CHECK(query.defined() && key.defined() && value.defined(), kOp, ": query, key and value must be defined");
  GR_CHECK(query.dim() >= 2 && key.dim() >= 2 && value.dim() >= 2, kOp,
           ": expected query, key and value of at least 2 dims ([..., L, E], [..., S, E], [..., S, Ev]), got ",
           query.sizes(), ", ", key.sizes(), " and ", value.sizes());
  GR_CHECK(query.scalar_type() == key.scalar_type() && query.scalar_type() == value.scalar_type(),
           "Expected query, key, and value to have the same dtype, but got query.dtype: ", query.scalar_type(),
           " key.dtype: ", key.scalar_type(), " and value.dtype: ", value.scalar_type(), " instead.");
  GR_CHECK(query.scalar_type() == kFloat32 || query.scalar_type() == kFloat64, kOp,
           ": expected float32 or float64 query, key and value, got ", query.scalar_type());
  GR_CHECK(query.device() == key.device() && query.device() == value.device(), kOp,
           ": expected query, key and value on one device, got ", query.device(), ", ", key.device(), " and ",
           value.device());
  GR_CHECK(key.size(-1) == query.size(-1), kOp, ": expected key's last dim to equal query's (E), got query ",
           query.sizes(), " and key ", key.sizes());
  GR_CHECK(key.size(-2) == value.size(-2), kOp, ": expected key and value of the same length S (dim -2), got key ",
           key.sizes(), " and value ", value.sizes());
  GR_CHECK(dropout_p >= 0.0 && dropout_p <= 1.0, kOp, ": dropout_p has to be between 0 and 1, but got ", dropout_p);
  GR_CHECK(!(is_causal && attn_mask.defined()),
           "_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True");
  Prepared r;
  r.batch = broadcast_shapes(broadcast_shapes(batch_dims(query), batch_dims(key), kOp), batch_dims(value), kOp);
  const int64_t L = query.size(-2), S = key.size(-2), E = query.size(-1), Ev = value.size(-1);
  int64_t B = 1;
  for (int64_t d : r.batch) B *= d;
  auto flat = [&](const Tensor& t, int64_t rows, int64_t cols) {
    std::vector<int64_t> full = r.batch;
    full.push_back(rows);
    full.push_back(cols);
    return reshape(contiguous(expand(t, full)), {B, rows, cols});
  };
  r.q = flat(query, L, E);
  r.k = flat(key, S, E);
  r.v = flat(value, S, Ev);
  AttentionParams& p = r.p;
  p.B = B, p.L = L, p.S = S, p.E = E, p.Ev = Ev;
  p.scale = scale ? *scale : 1.0 / std::sqrt(static_cast<double>(E));
  p.causal = is_causal;
  if (dropout_p > 0) {
    p.dropout_p = dropout_p;
    p.dropout_threshold = dropout_threshold(dropout_p);
    p.dropout_scale = dropout_scale(dropout_p);
  }
  if (attn_mask.defined()) {
    const ScalarType mt = attn_mask.scalar_type();
    GR_CHECK(mt == kBool || mt == query.scalar_type(),
             "Expected attn_mask dtype to be bool or float or to match query dtype, but got attn_mask.dtype: ", mt,
             " and  query.dtype: ", query.scalar_type(), " instead.");
    GR_CHECK(attn_mask.device() == query.device(), kOp, ": expected attn_mask on ", query.device(), ", got ",
             attn_mask.device());
    std::vector<int64_t> full = r.batch;
    full.push_back(L);
    full.push_back(S);
    bool broadcasts = attn_mask.dim() <= static_cast<int64_t>(full.size());
    for (int64_t d = 1; broadcasts && d <= attn_mask.dim(); ++d) {
      const int64_t m = attn_mask.size(-d);
      broadcasts = m == 1 || m == full[full.size() - d];
    }
    GR_CHECK(broadcasts, kOp, ": attn_mask of shape ", attn_mask.sizes(), " does not broadcast to the attention weights' shape ",
             IntArrayRef(full));
    // A broadcast view: a mask shared by heads or batches is read in place, never copied.
    r.mask = expand(attn_mask, full);
    p.mask = mt == kBool ? AttentionMask::Bool : AttentionMask::Float;
    const IntArrayRef st = r.mask.strides();
    p.mask_stride_l = st[st.size() - 2];
    p.mask_stride_s = st[st.size() - 1];
    Tensor offsets = empty({B}, TensorOptions(kInt64));
    int64_t* off = offsets.data_ptr<int64_t>();
    for (int64_t b = 0; b < B; ++b) {  // unravel b over the batch dims
      int64_t rest = b, o = 0;
      for (int64_t d = static_cast<int64_t>(r.batch.size()) - 1; d >= 0; --d) {
        o += rest % r.batch[d] * st[d];
        rest /= r.batch[d];
      }
      off[b] = o;
    }
    r.mask_offset = to_device(offsets, query.device());
    p.mask_offset = r.mask_offset.data_ptr<int64_t>();
  }
  return r;
}

std::vector<int64_t> with(std::vector<int64_t> batch, std::initializer_list<int64_t> tail) {
  batch.insert(batch.end(), tail);
  return batch;
}

}  // namespace

AttentionSaved scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                            const Tensor& attn_mask, double dropout_p, bool is_causal,
                                            std::optional<double> scale, Generator* gen) {
  Prepared r = prepare(query, key, value, attn_mask, dropout_p, is_causal, scale);
  AttentionParams& p = r.p;
  AttentionSaved saved;
  if (p.dropout_p > 0) {
    Generator& g = gen ? *gen : default_generator();
    saved.seed = p.seed = g.seed();
    saved.offset = p.offset = g.reserve(static_cast<uint64_t>((p.B * p.L * p.S + 3) / 4));
  }
  Tensor out = empty({p.B, p.L, p.Ev}, query.options());
  Tensor lse = empty({p.B, p.L}, query.options());
  if (p.B * p.L > 0)
    attention_stub(query.device(), r.q.data_ptr(), r.k.data_ptr(), r.v.data_ptr(),
                   r.mask.defined() ? r.mask.data_ptr() : nullptr, out.data_ptr(), lse.data_ptr(), p,
                   query.scalar_type());
  saved.out = reshape(out, with(r.batch, {p.L, p.Ev}));
  saved.lse = reshape(lse, with(r.batch, {p.L}));
  return saved;
}

std::tuple<Tensor, Tensor, Tensor> scaled_dot_product_attention_backward(
    const Tensor& grad_out, const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& attn_mask,
    double dropout_p, bool is_causal, std::optional<double> scale, const AttentionSaved& saved) {
  Prepared r = prepare(query, key, value, attn_mask, dropout_p, is_causal, scale);
  AttentionParams& p = r.p;
  p.seed = saved.seed;
  p.offset = saved.offset;
  Tensor g = reshape(contiguous(expand(grad_out, with(r.batch, {p.L, p.Ev}))), {p.B, p.L, p.Ev});
  Tensor out = contiguous(saved.out), lse = contiguous(saved.lse);
  Tensor dq = empty({p.B, p.L, p.E}, query.options());
  Tensor dk = empty({p.B, p.S, p.E}, query.options());
  Tensor dv = empty({p.B, p.S, p.Ev}, query.options());
  if (p.B * p.L > 0 && p.S > 0) {
    attention_backward_stub(query.device(), g.data_ptr(), r.q.data_ptr(), r.k.data_ptr(), r.v.data_ptr(),
                            r.mask.defined() ? r.mask.data_ptr() : nullptr, out.data_ptr(), lse.data_ptr(),
                            dq.data_ptr(), dk.data_ptr(), dv.data_ptr(), p, query.scalar_type());
  } else {
    fill_(dq, 0);
    fill_(dk, 0);
    fill_(dv, 0);
  }
  return {sum_to(reshape(dq, with(r.batch, {p.L, p.E})), query.sizes()),
          sum_to(reshape(dk, with(r.batch, {p.S, p.E})), key.sizes()),
          sum_to(reshape(dv, with(r.batch, {p.S, p.Ev})), value.sizes())};
}

}  // namespace gr::native
