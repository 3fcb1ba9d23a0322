// Copies that rearrange elements: flip and roll (each the other's adjoint up to a sign of the
// shifts, so their backward is themselves), narrow_copy, repeat (backward: sum over the
// copies) and repeat_interleave (index_select with repeated indices).
#include "autograd/function.h"
#include "autograd/ops.h"
#include "core/factory.h"
#include "core/native/copy/copy.h"
#include "core/native/shape/rearrange.h"
#include "core/native/shape/shape.h"

namespace gr {

using autograd::record;

Tensor flip(const Tensor& self, IntArrayRef dims) {
  Tensor out = native::flip(self, dims);
  if (autograd::needs_grad(self))
    record("FlipBackward0", {self}, {out}, [dims = dims.vec()](const TensorList& g, const std::vector<bool>&) {
      return TensorList{flip(g[0], dims)};
    });
  return out;
}

Tensor roll(const Tensor& self, IntArrayRef shifts, IntArrayRef dims) {
  Tensor out = native::roll(self, shifts, dims);
  if (autograd::needs_grad(self)) {
    std::vector<int64_t> back;
    for (int64_t s : shifts) back.push_back(-s);
    record("RollBackward0", {self}, {out}, [back, dims = dims.vec()](const TensorList& g, const std::vector<bool>&) {
      return TensorList{roll(g[0], back, dims)};
    });
  }
  return out;
}

Tensor narrow_copy(const Tensor& self, int64_t dim, int64_t start, int64_t length) {
  return self.narrow(dim, start, length).clone();
}

// Note [repeat as a view]: self (padded with leading 1s to len(repeats) dims, sizes p_i) viewed
// as [1, p_0, 1, p_1, ...] and expanded to [r_0, p_0, r_1, p_1, ...] holds every copy; one
// contiguous copy of it, viewed as [r_0 * p_0, ...], is the result. The gradient is the
// incoming one viewed the same way and summed over the r_i dims.
Tensor Tensor::repeat(IntArrayRef repeats) const {
  GR_CHECK(static_cast<int64_t>(repeats.size()) >= dim(), "repeat: number of dimensions of repeat dims (",
           repeats.size(), ") can not be smaller than number of dimensions of tensor (", dim(), ")");
  const int64_t lead = static_cast<int64_t>(repeats.size()) - dim();
  std::vector<int64_t> ones_shape, expanded, target, copy_dims;
  for (int64_t i = 0; i < static_cast<int64_t>(repeats.size()); ++i) {
    GR_CHECK(repeats[i] >= 0, "repeat: trying to create a tensor with negative dimension ", repeats[i], " (repeats ",
             repeats, ")");
    const int64_t p = i < lead ? 1 : size(i - lead);
    ones_shape.insert(ones_shape.end(), {1, p});
    expanded.insert(expanded.end(), {repeats[i], p});
    target.push_back(repeats[i] * p);
    copy_dims.push_back(2 * i);
  }
  Tensor spread = native::expand(native::reshape(*this, ones_shape), expanded);
  Tensor out = native::reshape(native::clone(spread), target);
  if (autograd::needs_grad(*this))
    record("RepeatBackward0", {*this}, {out},
           [expanded, copy_dims, shape = sizes().vec()](const TensorList& g, const std::vector<bool>&) {
             return TensorList{g[0].reshape(expanded).sum(copy_dims).reshape(shape)};
           });
  return out;
}

// The index form: repeats [n] (int64, >= 0) -> [repeats.sum()] holding i repeats[i] times.
Tensor repeat_interleave(const Tensor& repeats, std::optional<int64_t> output_size) {
  GR_CHECK(repeats.dim() <= 1, "repeat_interleave: repeats must be 0-dim or 1-dim tensor, got shape ", repeats.sizes());
  GR_CHECK(repeats.scalar_type() == kInt64, "repeat_interleave: repeats has to be an int64 tensor, got ",
           repeats.scalar_type());
  Tensor r = native::contiguous(native::to_device(native::reshape(repeats, {-1}), Device(kCPU)));
  const int64_t* rp = r.data_ptr<int64_t>();
  int64_t total = 0;
  for (int64_t i = 0; i < r.numel(); ++i) {
    GR_CHECK(rp[i] >= 0, "repeat_interleave: repeats can not be negative, got ", rp[i], " at position ", i);
    total += rp[i];
  }
  GR_CHECK(!output_size || *output_size == total, "repeat_interleave: allocated size (", output_size.value_or(0),
           ") does not match required size (", total, ")");
  Tensor out = empty({total}, TensorOptions(kInt64));
  int64_t* o = out.data_ptr<int64_t>();
  for (int64_t i = 0; i < r.numel(); ++i) o = std::fill_n(o, rp[i], i);
  return native::to_device(out, repeats.device());
}

Tensor repeat_interleave(const Tensor& self, const Tensor& repeats, std::optional<int64_t> dim,
                         std::optional<int64_t> output_size) {
  Tensor input = dim ? self : self.flatten();
  const int64_t d = dim ? wrap_dim(*dim, self.dim(), "repeat_interleave") : 0;
  const int64_t n = input.dim() == 0 ? 1 : input.size(d);
  Tensor r = repeats;
  if (repeats.dim() == 0 || (repeats.dim() == 1 && repeats.size(0) == 1)) r = native::expand(native::reshape(repeats, {1}), {n});
  GR_CHECK(r.dim() == 1 && r.size(0) == n, "repeat_interleave: repeats must have the same size as input along dim, but ",
           "got repeats.size(0) = ", r.numel(), " and input.size(", d, ") = ", n);
  return input.index_select(d, repeat_interleave(r, output_size));
}

// An integer count repeats every element in place: a view expanded along a new dim, merged.
Tensor repeat_interleave(const Tensor& self, int64_t repeats, std::optional<int64_t> dim,
                         std::optional<int64_t> output_size) {
  GR_CHECK(repeats >= 0, "repeat_interleave: repeats can not be negative, got ", repeats);
  Tensor input = dim ? (self.dim() == 0 ? self.reshape({1}) : self) : self.flatten();
  const int64_t d = dim ? wrap_dim(*dim, input.dim(), "repeat_interleave") : 0;
  GR_CHECK(!output_size || *output_size == input.size(d) * repeats, "repeat_interleave: allocated size (", *output_size,
           ") does not match required size (", input.size(d) * repeats, ")");
  std::vector<int64_t> expanded = input.sizes().vec();
  expanded.insert(expanded.begin() + d + 1, repeats);
  return input.unsqueeze(d + 1).expand(expanded).flatten(d, d + 1);
}


}  // namespace gr
