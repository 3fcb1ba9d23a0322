// pixel_shuffle / pixel_unshuffle: [*, C * r * r, H, W] <-> [*, C, H * r, W * r] as a reshape,
// a permute and a reshape, so autograd (and double backward) comes from those views.
#include "autograd/ops.h"

namespace gr {

namespace {

// The leading (batch) dims of self, to which the channel and spatial sizes are appended.
std::vector<int64_t> batch_dims(const Tensor& self) {
  std::vector<int64_t> dims = self.sizes().vec();
  dims.resize(dims.size() - 3);
  return dims;
}

std::vector<int64_t> with(std::vector<int64_t> dims, std::initializer_list<int64_t> tail) {
  dims.insert(dims.end(), tail);
  return dims;
}

// The permutation of the last `n` of b + n dims given by `order`, batch dims staying.
std::vector<int64_t> permutation(int64_t b, std::initializer_list<int64_t> order) {
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < b; ++i) perm.push_back(i);
  for (int64_t o : order) perm.push_back(b + o);
  return perm;
}

}  // namespace

Tensor pixel_shuffle(const Tensor& self, int64_t upscale_factor) {
  GR_CHECK(self.dim() >= 3, "pixel_shuffle: expected an input with at least 3 dims [*, C * r * r, H, W], got ",
           self.sizes());
  GR_CHECK(upscale_factor > 0, "pixel_shuffle: upscale_factor must be positive, got ", upscale_factor);
  const int64_t r = upscale_factor, c = self.size(-3), h = self.size(-2), w = self.size(-1);
  GR_CHECK(c % (r * r) == 0, "pixel_shuffle: the channel dim (input.size(-3) = ", c,
           ") must be divisible by upscale_factor^2 = ", r * r, " (input ", self.sizes(), ")");
  const std::vector<int64_t> batch = batch_dims(self);
  const int64_t b = static_cast<int64_t>(batch.size()), oc = c / (r * r);
  return self.reshape(with(batch, {oc, r, r, h, w}))
      .permute(permutation(b, {0, 3, 1, 4, 2}))
      .reshape(with(batch, {oc, h * r, w * r}));
}

Tensor pixel_unshuffle(const Tensor& self, int64_t downscale_factor) {
  GR_CHECK(self.dim() >= 3, "pixel_unshuffle: expected an input with at least 3 dims [*, C, H * r, W * r], got ",
           self.sizes());
  GR_CHECK(downscale_factor > 0, "pixel_unshuffle: downscale_factor must be positive, got ", downscale_factor);
  const int64_t r = downscale_factor, c = self.size(-3), h = self.size(-2), w = self.size(-1);
  GR_CHECK(h % r == 0 && w % r == 0, "pixel_unshuffle: height and width (", h, ", ", w,
           ") must be divisible by downscale_factor = ", r, " (input ", self.sizes(), ")");
  const std::vector<int64_t> batch = batch_dims(self);
  const int64_t b = static_cast<int64_t>(batch.size());
  return self.reshape(with(batch, {c, h / r, r, w / r, r}))
      .permute(permutation(b, {0, 2, 4, 1, 3}))
      .reshape(with(batch, {c * r * r, h / r, w / r}));
}

}  // namespace gr
