// scaled_dot_product_attention around the fused kernels: torch's argument checks, the
// broadcast of batch dims, the mask's layout and the dropout stream's position.
#include "core/native/attention.h"

#include <algorithm>
#include <cmath>

#include "core/factory.h"
#include "core/native/copy.h"
#include "core/native/reduce.h"
#include "core/native/shape.h"
#include "core/native/strided_loop.h"

namespace gr::native {

namespace {

constexpr const char* kOp = "scaled_dot_product_attention";

Tensor f32(const Tensor& t) { return to_dtype(t, kFloat32); }

// Whether the kernels take these reduced-float operands as they are: the CPU kernel reads
// bfloat16 in place and converts as it fills its tiles; the CUDA kernels multiply bfloat16
// and float16 on tensor cores for heads up to kAttentionCudaTileDim wide.
bool reduced_native(const Tensor& q, const Tensor& k, const Tensor& v) {
  const ScalarType t = q.scalar_type();
  if (q.device().is_cpu()) return t == kBFloat16 && k.device().is_cpu() && v.device().is_cpu();
  return q.is_cuda() && k.device() == q.device() && v.device() == q.device() &&
         std::max(q.size(-1), v.size(-1)) <= kAttentionCudaTileDim;
}

// Reduced-float operands the kernels do not take are computed in float32 through converted
// copies (Note [Reduced float math]).
bool through_float32(const Tensor& q, const Tensor& k, const Tensor& v) {
  const ScalarType t = q.scalar_type();
  return is_reduced_float(t) && t == k.scalar_type() && t == v.scalar_type() && q.dim() >= 1 && v.dim() >= 1 &&
         !reduced_native(q, k, v);
}

std::vector<int64_t> batch_dims(const Tensor& t) { return {t.sizes().begin(), t.sizes().end() - 2}; }

// The inputs as the kernels read them (in place where they can: Note [Attention operands in
// place]), the kernel parameters, and the mask's per-batch offsets on the inputs' device.
struct Prepared {
  std::vector<int64_t> batch;  // the broadcast batch shape
  Tensor q, k, v, mask, mask_offset;
  AttentionParams p;
};

std::vector<int64_t> with(std::vector<int64_t> batch, std::initializer_list<int64_t> tail) {
  batch.insert(batch.end(), tail);
  return batch;
}

// The layout of t ([batch..., rows, cols]) if the kernel can read it where it lies.
std::optional<AttentionLayout> layout_in_place(const Tensor& t) {
  const IntArrayRef st = t.strides(), sz = t.sizes();
  const int64_t nb = t.dim() - 2;
  if (nb > 2 || (sz.back() > 1 && st.back() != 1)) return std::nullopt;
  AttentionLayout at;
  at.row_stride = st[nb];
  if (nb >= 1) at.outer_stride = st[0];
  if (nb == 2) at.inner = sz[1], at.inner_stride = st[1];
  if (at.inner == 0) at.inner = 1;  // an empty batch: nothing is read
  return at;
}

// An operand expanded to [batch..., rows, cols]: in place if it can be, else a contiguous copy.
Tensor operand(const Prepared& r, const Tensor& t, int64_t rows, int64_t cols, AttentionLayout& at) {
  const std::vector<int64_t> full = with(r.batch, {rows, cols});
  Tensor e = expand(t, full);
  if (std::optional<AttentionLayout> l = layout_in_place(e)) {
    at = *l;
    return e;
  }
  at = AttentionLayout::contiguous(rows, cols);
  return contiguous(e);
}

// A [batch..., rows, cols] result for the kernel to write: in the head layout of `like` when
// that is [N, H, T, .] viewed from [N, T, H, .] (the model's transpose), else contiguous.
Tensor result_like(const Prepared& r, const Tensor& like, int64_t rows, int64_t cols, AttentionLayout& at) {
  const std::vector<int64_t> full = with(r.batch, {rows, cols});
  Tensor t;
  if (full.size() == 4 && like.dim() == 4 && like.stride(1) < like.stride(2))
    t = transpose(empty({full[0], full[2], full[1], full[3]}, like.options()), 1, 2);
  else
    t = empty(full, like.options());
  at = layout_in_place(t).value_or(AttentionLayout::contiguous(rows, cols));
  return t;
}

// Note [Packed qkv gradients]
// A GPT's q, k and v are the three parts of one projection: qkv [N, T, 3C] split along its
// last dim, each viewed [N, T, H, D] and transposed to [N, H, T, D]. Their gradients are
// then written as the same three views of one new [N, T, 3C] tensor, so that the split's
// backward finds them adjacent and returns that tensor instead of concatenating copies
// (Tensor::split_with_sizes; 1% of a train_gpt tiny step). Only that exact layout is
// recognised; anything else gets three separate results.
bool packed_qkv_gradients(const Prepared& r, const Tensor& q, const Tensor& k, const Tensor& v, Tensor& dq, Tensor& dk,
                          Tensor& dv) {
  if (q.dim() != 4 || !q.storage().is_same(k.storage()) || !q.storage().is_same(v.storage()) ||
      q.sizes() != k.sizes() || q.sizes() != v.sizes() || q.strides() != k.strides() || q.strides() != v.strides() ||
      r.batch.size() != 2 || r.batch[0] != q.size(0) || r.batch[1] != q.size(1))
    return false;
  const int64_t N = q.size(0), H = q.size(1), T = q.size(2), D = q.size(3), C = H * D;
  const std::vector<int64_t> split_strides{T * 3 * C, D, 3 * C, 1};
  if (q.strides() != IntArrayRef(split_strides) || k.storage_offset() != q.storage_offset() + C ||
      v.storage_offset() != q.storage_offset() + 2 * C)
    return false;
  Tensor qkv = empty({N, T, 3 * C}, q.options());
  auto part = [&](int64_t i) { return transpose(view(narrow(qkv, 2, i * C, C), {N, T, H, D}), 1, 2); };
  dq = part(0), dk = part(1), dv = part(2);
  return true;
}

Prepared prepare(const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& attn_mask,
                 double dropout_p, bool is_causal, std::optional<double> scale) {
  GR_CHECK(query.defined() && key.defined() && value.defined(), kOp, ": query, key and value must be defined");
  GR_CHECK(query.dim() >= 2 && key.dim() >= 2 && value.dim() >= 2, kOp,
           ": expected query, key and value of at least 2 dims ([..., L, E], [..., S, E], [..., S, Ev]), got ",
           query.sizes(), ", ", key.sizes(), " and ", value.sizes());
  GR_CHECK(query.scalar_type() == key.scalar_type() && query.scalar_type() == value.scalar_type(),
           "Expected query, key, and value to have the same dtype, but got query.dtype: ", query.scalar_type(),
           " key.dtype: ", key.scalar_type(), " and value.dtype: ", value.scalar_type(), " instead.");
  GR_CHECK(query.scalar_type() == kFloat32 || query.scalar_type() == kFloat64 ||
               (is_reduced_float(query.scalar_type()) && reduced_native(query, key, value)),
           kOp, ": expected float32 or float64 query, key and value, got ", query.scalar_type());
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
  AttentionParams& p = r.p;
  p.B = B, p.L = L, p.S = S, p.E = E, p.Ev = Ev;
  p.q_at = p.dq_at = AttentionLayout::contiguous(L, E);
  p.k_at = p.dk_at = AttentionLayout::contiguous(S, E);
  p.v_at = p.dv_at = AttentionLayout::contiguous(S, Ev);
  p.out_at = p.grad_out_at = AttentionLayout::contiguous(L, Ev);
  r.q = operand(r, query, L, E, p.q_at);
  r.k = operand(r, key, S, E, p.k_at);
  r.v = operand(r, value, S, Ev, p.v_at);
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

}  // namespace

AttentionSaved scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                            const Tensor& attn_mask, double dropout_p, bool is_causal,
                                            std::optional<double> scale, Generator* gen) {
  if (through_float32(query, key, value)) {  // Note [Reduced float math]: the kernels run in float32
    const Tensor mask = attn_mask.defined() && attn_mask.scalar_type() != kBool ? f32(attn_mask) : attn_mask;
    AttentionSaved saved =
        scaled_dot_product_attention(f32(query), f32(key), f32(value), mask, dropout_p, is_causal, scale, gen);
    saved.out = to_dtype(saved.out, query.scalar_type());  // lse stays float32
    return saved;
  }
  Prepared r = prepare(query, key, value, attn_mask, dropout_p, is_causal, scale);
  AttentionParams& p = r.p;
  AttentionSaved saved;
  if (p.dropout_p > 0) {
    Generator& g = gen ? *gen : default_generator();
    saved.seed = p.seed = g.seed();
    saved.offset = p.offset = g.reserve(static_cast<uint64_t>((p.B * p.L * p.S + 3) / 4));
  }
  Tensor out = result_like(r, query, p.L, p.Ev, p.out_at);
  const ScalarType lse_type = is_reduced_float(query.scalar_type()) ? kFloat32 : query.scalar_type();
  Tensor lse = empty({p.B, p.L}, query.options().dtype(lse_type));
  if (p.B * p.L > 0)
    attention_stub(query.device(), r.q.data_ptr(), r.k.data_ptr(), r.v.data_ptr(),
                   r.mask.defined() ? r.mask.data_ptr() : nullptr, out.data_ptr(), lse.data_ptr(), p,
                   query.scalar_type());
  saved.out = out;
  saved.lse = reshape(lse, with(r.batch, {p.L}));
  return saved;
}

std::tuple<Tensor, Tensor, Tensor> scaled_dot_product_attention_backward(
    const Tensor& grad_out, const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& attn_mask,
    double dropout_p, bool is_causal, std::optional<double> scale, const AttentionSaved& saved) {
  if (through_float32(query, key, value)) {  // Note [Reduced float math]
    const ScalarType t = query.scalar_type();
    const Tensor mask = attn_mask.defined() && attn_mask.scalar_type() != kBool ? f32(attn_mask) : attn_mask;
    AttentionSaved saved32 = saved;
    saved32.out = f32(saved.out);
    auto [dq, dk, dv] = scaled_dot_product_attention_backward(f32(grad_out), f32(query), f32(key), f32(value), mask,
                                                              dropout_p, is_causal, scale, saved32);
    return {to_dtype(dq, t), to_dtype(dk, t), to_dtype(dv, t)};
  }
  Prepared r = prepare(query, key, value, attn_mask, dropout_p, is_causal, scale);
  AttentionParams& p = r.p;
  p.seed = saved.seed;
  p.offset = saved.offset;
  Tensor g = operand(r, grad_out, p.L, p.Ev, p.grad_out_at);
  Tensor out = operand(r, saved.out, p.L, p.Ev, p.out_at), lse = contiguous(saved.lse);
  Tensor dq, dk, dv;
  if (!packed_qkv_gradients(r, query, key, value, dq, dk, dv)) {
    dq = result_like(r, query, p.L, p.E, p.dq_at);
    dk = result_like(r, key, p.S, p.E, p.dk_at);
    dv = result_like(r, value, p.S, p.Ev, p.dv_at);
  } else {
    p.dq_at = *layout_in_place(dq), p.dk_at = *layout_in_place(dk), p.dv_at = *layout_in_place(dv);
  }
  if (p.B * p.L > 0 && p.S > 0) {
    attention_backward_stub(query.device(), g.data_ptr(), r.q.data_ptr(), r.k.data_ptr(), r.v.data_ptr(),
                            r.mask.defined() ? r.mask.data_ptr() : nullptr, out.data_ptr(), lse.data_ptr(),
                            dq.data_ptr(), dk.data_ptr(), dv.data_ptr(), p, query.scalar_type());
  } else {
    fill_(dq, 0);
    fill_(dk, 0);
    fill_(dv, 0);
  }
  return {sum_to(dq, query.sizes()), sum_to(dk, key.sizes()), sum_to(dv, value.sizes())};
}

}  // namespace gr::native
