// embedding (a row lookup whose backward index_adds the gradient rows into a zero weight
// gradient, skipping padding_idx) and embedding_bag (sum/mean/max of looked-up rows per bag,
// written with differentiable gr:: ops, so its double backward comes for free).
#include <vector>

#include "autograd/function.h"
#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "core/factory.h"
#include "core/tensor_literal.h"
#include "core/native/copy/copy.h"
#include "core/native/index/index_ops.h"

namespace gr {

using autograd::record;

namespace {

void check_indices(const Tensor& weight, const Tensor& indices, const char* op) {
  GR_CHECK(weight.defined() && indices.defined(), op, ": undefined tensor argument");
  GR_CHECK(weight.dim() == 2, op, ": expected weight to be 2-D [num_embeddings, embedding_dim], got weight of shape ",
           weight.sizes());
  GR_CHECK(indices.scalar_type() == kInt64 || indices.scalar_type() == kInt32, op,
           ": expected indices of dtype int64 or int32, got ", indices.scalar_type(), " (indices of shape ",
           indices.sizes(), ")");
  GR_CHECK(indices.device() == weight.device(), op, ": expected indices on ", weight.device(), " like weight, got ",
           indices.device());
}

// embedding_bag's max mode: each bag's element-wise max over its rows (gr::max along dim 0,
// so the gradient goes to the maximal row of each column), zeros for an empty bag;
// max_indices [bags, dim] holds the weight row each maximum came from (-1 for empty bags).
std::tuple<Tensor, Tensor, Tensor, Tensor> max_bags(const Tensor& weight, const Tensor& flat, const Tensor& rows,
                                                    const std::vector<int64_t>& starts, int64_t pad,
                                                    const Tensor& offset2bag, const Tensor& bag_size) {
  const int64_t n = flat.size(0), dim = weight.size(1);
  Tensor idx_cpu = flat.to(kCPU);
  const int64_t* idx = idx_cpu.data_ptr<int64_t>();
  TensorList outs, max_indices;
  for (size_t b = 0; b < starts.size(); ++b) {
    const int64_t end = b + 1 < starts.size() ? starts[b + 1] : n;
    std::vector<int64_t> keep;
    for (int64_t i = starts[b]; i < end; ++i)
      if (idx[i] != pad) keep.push_back(i);
    if (keep.empty()) {
      outs.push_back(zeros({dim}, weight.options()));
      max_indices.push_back(full({dim}, -1, TensorOptions(kInt64).device(weight.device())));
      continue;
    }
    Tensor positions = tensor(keep, TensorOptions(kInt64)).to(weight.device());
    auto [values, arg] = gr::max(rows.index_select(0, positions), 0);
    outs.push_back(values);
    max_indices.push_back(flat.index_select(0, positions.index_select(0, arg)));
  }
  const auto bags = static_cast<int64_t>(starts.size());
  Tensor out = bags ? stack(outs) : zeros({0, dim}, weight.options());
  Tensor mi = bags ? stack(max_indices) : zeros({0, dim}, TensorOptions(kInt64).device(weight.device()));
  return {out, offset2bag, bag_size, mi};
}

}  // namespace

Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx, bool scale_grad_by_freq,
                 bool sparse) {
  check_indices(weight, indices, "embedding");
  GR_CHECK(!sparse, "embedding: sparse gradients are not supported (sparse=true)");
  const int64_t num = weight.size(0);
  GR_CHECK(padding_idx >= -1 && padding_idx < num, "embedding: padding_idx must be within num_embeddings (",
           num, "), got ", padding_idx);
  Tensor flat = native::contiguous(indices).reshape({-1});
  if (flat.scalar_type() != kInt64) flat = native::to_dtype(flat, kInt64);
  std::vector<int64_t> shape(indices.sizes().begin(), indices.sizes().end());
  shape.push_back(weight.size(1));
  Tensor out = native::index_select_wrapped(weight, 0, flat, false, "embedding").view(shape);
  if (autograd::needs_grad(weight)) {
    record("EmbeddingBackward0", {weight}, {out},
           [flat, num, dim = weight.size(1), padding_idx, scale_grad_by_freq, opts = weight.options()](
               const TensorList& g, const std::vector<bool>&) {
             Tensor rows = g[0].reshape({-1, dim});
             if (padding_idx >= 0) rows = rows.masked_fill(flat.eq(padding_idx).unsqueeze(1), 0);
             if (scale_grad_by_freq) {  // each row's gradient divided by its index's count in the batch
               Tensor counts = zeros({num}, opts).index_add(0, flat, ones({flat.size(0)}, opts));
               rows = rows / counts.index_select(0, flat).unsqueeze(1);
             }
             return TensorList{zeros({num, dim}, opts).index_add(0, flat, rows)};
           });
  }
  return out;
}

std::tuple<Tensor, Tensor, Tensor, Tensor> embedding_bag(const Tensor& weight, const Tensor& indices,
                                                         const Tensor& offsets, bool scale_grad_by_freq, int64_t mode,
                                                         bool sparse, const Tensor& per_sample_weights,
                                                         bool include_last_offset, std::optional<int64_t> padding_idx) {
  check_indices(weight, indices, "embedding_bag");
  GR_CHECK(mode >= 0 && mode <= 2, "embedding_bag: mode ", mode, " is not supported (0 = sum, 1 = mean, 2 = max)");
  GR_CHECK(indices.dim() == 1 || indices.dim() == 2, "embedding_bag: expected indices 1-D or 2-D, got shape ",
           indices.sizes());
  Tensor flat = native::to_dtype(native::contiguous(indices).reshape({-1}), kInt64);
  const int64_t n = flat.size(0);
  std::vector<int64_t> starts;
  if (indices.dim() == 2) {
    GR_CHECK(!offsets.defined(), "embedding_bag: offsets has to be undefined if indices is 2-D, got offsets of shape ",
             offsets.sizes());
    for (int64_t b = 0; b < indices.size(0); ++b) starts.push_back(b * indices.size(1));
  } else {
    GR_CHECK(offsets.defined() && offsets.dim() == 1, "embedding_bag: expected 1-D offsets with 1-D indices, got ",
             offsets.defined() ? offsets.sizes() : IntArrayRef{});
    Tensor o = native::to_dtype(native::contiguous(offsets), kInt64).to(kCPU);
    const int64_t* op = o.data_ptr<int64_t>();
    starts.assign(op, op + o.numel());
    if (include_last_offset) {
      GR_CHECK(!starts.empty(), "embedding_bag: include_last_offset needs at least one offset");
      starts.pop_back();
    }
    GR_CHECK(starts.empty() || starts[0] == 0, "embedding_bag: offsets[0] has to be 0, got ", starts[0]);
    for (size_t b = 1; b < starts.size(); ++b)
      GR_CHECK(starts[b - 1] <= starts[b] && starts[b] <= n, "embedding_bag: offsets must be non-decreasing and at "
               "most the number of indices (", n, "), got offsets[", b, "] = ", starts[b]);
  }
  const auto bags = static_cast<int64_t>(starts.size());
  // offset2bag[i]: the bag of index i.
  std::vector<int64_t> o2b(static_cast<size_t>(n));
  for (int64_t b = 0; b < bags; ++b) {
    const int64_t end = b + 1 < bags ? starts[static_cast<size_t>(b + 1)] : n;
    for (int64_t i = starts[static_cast<size_t>(b)]; i < end; ++i) o2b[static_cast<size_t>(i)] = b;
  }
  Tensor offset2bag = tensor(o2b, TensorOptions(kInt64)).to(weight.device());
  const int64_t pad = padding_idx.value_or(-1);
  Tensor rows = embedding(weight, flat, -1, scale_grad_by_freq, sparse);  // [n, dim]
  Tensor keep = pad >= 0 ? flat.ne(pad) : ones({n}, TensorOptions(kBool).device(weight.device()));
  if (pad >= 0) rows = rows.masked_fill(keep.logical_not().unsqueeze(1), 0);
  if (per_sample_weights.defined()) {
    GR_CHECK(mode == 0, "embedding_bag: per_sample_weights is only supported for mode sum (0), got mode ", mode);
    GR_CHECK(per_sample_weights.sizes() == flat.sizes() || per_sample_weights.sizes() == indices.sizes(),
             "embedding_bag: expected per_sample_weights of the indices' shape ", indices.sizes(), ", got ",
             per_sample_weights.sizes());
    rows = rows * per_sample_weights.reshape({-1, 1});
  }
  Tensor bag_size = zeros({bags}, TensorOptions(kInt64).device(weight.device()))
                        .index_add(0, offset2bag, native::to_dtype(keep, kInt64));
  if (mode == 2) return max_bags(weight, flat, rows, starts, pad, offset2bag, bag_size);
  Tensor out = zeros({bags, weight.size(1)}, weight.options()).index_add(0, offset2bag, rows);
  if (mode == 1) out = out / native::to_dtype(bag_size, weight.scalar_type()).clamp_min(1).unsqueeze(1);
  return {out, offset2bag, bag_size, zeros({bags}, TensorOptions(kInt64).device(weight.device()))};
}

}  // namespace gr
