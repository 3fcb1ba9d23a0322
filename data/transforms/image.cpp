// Image kernels over contiguous CPU batches [N, C, H, W]. Crop and flip move bytes, so
// they work for every dtype; Normalize computes (x - mean) / std as torchvision does.
#include "data/transforms/image.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "core/factory.h"
#include "core/native/copy.h"
#include "core/native/shape.h"
#include "core/philox.h"

namespace gr::data {

namespace {

// The 4 random numbers of example `i` of a batch whose first Philox block is `first`.
// See Note [Transform randomness].
std::array<uint32_t, 4> example_random(uint64_t seed, uint64_t first, int64_t i) {
  Philox4x32 rng(seed, 0, first + static_cast<uint64_t>(i));
  std::array<uint32_t, 4> r;
  rng.next(r.data());
  return r;
}

// Copies one row of `count` elements of `bytes` each, reversed.
void reverse_row(const char* src, char* dst, int64_t count, size_t bytes) {
  auto run = [&]<class T>() {
    const T* s = reinterpret_cast<const T*>(src);
    std::reverse_copy(s, s + count, reinterpret_cast<T*>(dst));
  };
  switch (bytes) {
    case 1: return run.operator()<uint8_t>();
    case 2: return run.operator()<uint16_t>();
    case 4: return run.operator()<uint32_t>();
    default: return run.operator()<uint64_t>();
  }
}

}  // namespace

Tensor to_unit_float(const Tensor& images) {
  GR_CHECK(images.defined() && images.scalar_type() == kUInt8 && images.is_cpu(),
           "to_unit_float: expected a uint8 CPU tensor, got ", images.defined() ? images.toString() : "undefined");
  std::array<float, 256> table;
  for (int v = 0; v < 256; ++v) table[v] = static_cast<float>(v) / 255.0f;
  Tensor in = native::contiguous(images);
  Tensor out = empty(in.sizes(), kFloat32);
  const uint8_t* src = in.data_ptr<uint8_t>();
  float* dst = out.data_ptr<float>();
  for (int64_t i = 0, n = in.numel(); i < n; ++i) dst[i] = table[src[i]];
  return out;
}

namespace transforms::detail {

Tensor ImageKernel::operator()(const Tensor& x, Generator& gen) const {
  GR_CHECK(x.defined() && (x.dim() == 3 || x.dim() == 4),
           "Transform: expected an image [C, H, W] or a batch [N, C, H, W], got ",
           x.defined() ? x.toString() : "undefined");
  GR_CHECK(x.is_cpu(), "Transform: expected a CPU tensor, got one on ", x.device().str());
  const bool single = x.dim() == 3;
  Tensor out = apply(native::contiguous(single ? native::unsqueeze(x, 0) : x), gen);
  return single ? native::squeeze(out, 0) : out;
}

NormalizeImages::NormalizeImages(std::vector<double> mean, std::vector<double> stddev)
    : mean_(std::move(mean)), stddev_(std::move(stddev)) {
  GR_CHECK(!mean_.empty() && mean_.size() == stddev_.size(), "Normalize: mean has ", mean_.size(),
           " values and std has ", stddev_.size(), "; expected the same non-zero number");
  for (double s : stddev_) GR_CHECK(s != 0, "Normalize: std must be non-zero");
}

Tensor NormalizeImages::apply(const Tensor& x, Generator&) const {
  const int64_t n = x.size(0), channels = x.size(1), plane = x.size(2) * x.size(3);
  const int64_t given = static_cast<int64_t>(mean_.size());
  GR_CHECK(given == 1 || given == channels, "Normalize: ", given, " mean/std values for an input with ", channels,
           " channels ", x.sizes());
  Tensor out = empty(x.sizes(), x.scalar_type());
  dispatch_floating(x.scalar_type(), "Normalize", [&]<class T>() {
    const T* src = x.data_ptr<T>();
    T* dst = out.data_ptr<T>();
    for (int64_t i = 0; i < n * channels; ++i) {
      const int64_t c = given == 1 ? 0 : i % channels;
      const T mean = static_cast<T>(mean_[c]), stddev = static_cast<T>(stddev_[c]);
      const T* s = src + i * plane;
      T* d = dst + i * plane;
      for (int64_t k = 0; k < plane; ++k) d[k] = (s[k] - mean) / stddev;
    }
  });
  return out;
}

CropImages::CropImages(int64_t height, int64_t width, int64_t padding)
    : height_(height), width_(width), padding_(padding) {
  GR_CHECK(height > 0 && width > 0 && padding >= 0, "RandomCrop: expected a positive size and padding >= 0, got ",
           height, "x", width, " padding ", padding);
}

Tensor CropImages::apply(const Tensor& x, Generator& gen) const {
  const int64_t n = x.size(0), channels = x.size(1), h = x.size(2), w = x.size(3), p = padding_;
  GR_CHECK(height_ <= h + 2 * p && width_ <= w + 2 * p, "RandomCrop: crop ", height_, "x", width_,
           " is larger than the padded image ", h + 2 * p, "x", w + 2 * p, " of input ", x.sizes());
  Tensor out = empty({n, channels, height_, width_}, x.scalar_type());
  const size_t es = x.element_size();
  const char* src = static_cast<const char*>(x.data_ptr());
  char* dst = static_cast<char*>(out.data_ptr());
  const uint64_t seed = gen.seed(), first = gen.reserve(static_cast<uint64_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    auto r = example_random(seed, first, i);
    // Window origin in padded coordinates; source pixel = origin + offset - padding.
    const int64_t top = r[0] % static_cast<uint64_t>(h + 2 * p - height_ + 1);
    const int64_t left = r[1] % static_cast<uint64_t>(w + 2 * p - width_ + 1);
    const int64_t j0 = std::clamp<int64_t>(p - left, 0, width_), j1 = std::clamp<int64_t>(w + p - left, j0, width_);
    for (int64_t c = 0; c < channels; ++c) {
      const char* plane = src + ((i * channels + c) * h * w) * es;
      for (int64_t y = 0; y < height_; ++y) {
        char* row = dst + (((i * channels + c) * height_ + y) * width_) * es;
        const int64_t sy = top + y - p;
        if (sy < 0 || sy >= h) {
          std::memset(row, 0, width_ * es);
          continue;
        }
        std::memset(row, 0, j0 * es);
        std::memcpy(row + j0 * es, plane + (sy * w + left + j0 - p) * es, (j1 - j0) * es);
        std::memset(row + j1 * es, 0, (width_ - j1) * es);
      }
    }
  }
  return out;
}

FlipImages::FlipImages(double p) : p_(p) {
  GR_CHECK(p >= 0 && p <= 1, "RandomHorizontalFlip: p must be in [0, 1], got ", p);
}

Tensor FlipImages::apply(const Tensor& x, Generator& gen) const {
  const int64_t n = x.size(0), rows = x.size(1) * x.size(2), w = x.size(3);
  const size_t es = x.element_size(), image_bytes = rows * w * es;
  Tensor out = empty(x.sizes(), x.scalar_type());
  const char* src = static_cast<const char*>(x.data_ptr());
  char* dst = static_cast<char*>(out.data_ptr());
  const uint64_t seed = gen.seed(), first = gen.reserve(static_cast<uint64_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const bool flip = uniform_float(example_random(seed, first, i)[0]) <= p_;  // (0, 1]: p = 0 never, p = 1 always
    const char* s = src + i * image_bytes;
    char* d = dst + i * image_bytes;
    if (!flip) {
      std::memcpy(d, s, image_bytes);
      continue;
    }
    for (int64_t r = 0; r < rows; ++r) reverse_row(s + r * w * es, d + r * w * es, w, es);
  }
  return out;
}

}  // namespace transforms::detail

}  // namespace gr::data
