// Image transforms (as torchvision's): Normalize, RandomCrop with zero padding,
// RandomHorizontalFlip, Compose; and to_unit_float for uint8 images. Each takes one example
// [C, H, W] or a batch [N, C, H, W]; random ones draw from an explicit Generator.
#pragma once

#include <concepts>
#include <memory>
#include <vector>

#include "core/generator.h"
#include "core/tensor.h"

namespace gr::data {

// uint8 images to float32 in [0, 1] (x / 255, as torchvision's ToTensor).
Tensor to_unit_float(const Tensor& images);

// Note [Transform randomness]
// A random transform reserves one Philox block (4 numbers) per example from the generator,
// and example i of a batch uses block i: transforming a batch with a generator gives what
// transforming its examples one at a time, in order, with that generator gives. The
// DataLoader passes each batch its own generator, seeded from (seed, epoch, batch index), so
// the result never depends on which thread ran the batch.
class Transform {
 public:
  virtual ~Transform() = default;
  // x: [C, H, W] or [N, C, H, W]; returns a new tensor. `gen` null means the default generator.
  Tensor operator()(const Tensor& x, Generator* gen = nullptr) const;
  // The work: x is always a contiguous batch [N, C, H, W].
  virtual Tensor apply(const Tensor& x, Generator& gen) const = 0;
};

// (x - mean[c]) / std[c] per channel, float32 or float64. One value of mean/std serves all channels.
class Normalize : public Transform {
 public:
  Normalize(std::vector<double> mean, std::vector<double> stddev);
  Tensor apply(const Tensor& x, Generator& gen) const override;

 private:
  std::vector<double> mean_, stddev_;
};

// A random height x width window of the image zero-padded by `padding` on every side.
class RandomCrop : public Transform {
 public:
  explicit RandomCrop(int64_t size, int64_t padding = 0) : RandomCrop(size, size, padding) {}
  RandomCrop(int64_t height, int64_t width, int64_t padding);
  Tensor apply(const Tensor& x, Generator& gen) const override;

 private:
  int64_t height_, width_, padding_;
};

// Mirrors each image left-right with probability p.
class RandomHorizontalFlip : public Transform {
 public:
  explicit RandomHorizontalFlip(double p = 0.5);
  Tensor apply(const Tensor& x, Generator& gen) const override;

 private:
  double p_;
};

// Applies transforms in order: Compose(RandomCrop(28, 2), Normalize({0.286}, {0.353})).
class Compose : public Transform {
 public:
  explicit Compose(std::vector<std::shared_ptr<const Transform>> transforms);
  template <class... T>
    requires(std::derived_from<T, Transform> && ...)
  explicit Compose(T... transforms) : transforms_{std::make_shared<const T>(std::move(transforms))...} {}
  Tensor apply(const Tensor& x, Generator& gen) const override;

 private:
  std::vector<std::shared_ptr<const Transform>> transforms_;
};

}  // namespace gr::data
