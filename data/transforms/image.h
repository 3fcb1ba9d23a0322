// The image kernels under the transforms of data/transforms/tensor.h (Normalize, RandomCrop
// with zero padding, RandomHorizontalFlip), each on one image [C, H, W] or a batch
// [N, C, H, W] with an explicit generator; and to_unit_float for uint8 images.
#pragma once

#include <cstdint>
#include <vector>

#include "core/generator.h"
#include "core/tensor.h"

namespace gr::data {

// uint8 images to float32 in [0, 1] (x / 255, as torchvision's ToTensor).
Tensor to_unit_float(const Tensor& images);

namespace transforms::detail {

// Note [Transform randomness]
// A random transform reserves one Philox block (4 numbers) per example from the generator,
// and example i of a batch uses block i: transforming a batch with a generator gives what
// transforming its examples one at a time, in order, with that generator gives. A loader
// gives each batch its own generator (batch_generator(), Note [Batch determinism]), so the
// result never depends on which thread made the batch, nor on whether the transform ran on
// the examples before Stack or on the stacked batch after it.
class ImageKernel {
 public:
  virtual ~ImageKernel() = default;
  // x: a CPU image [C, H, W] or batch [N, C, H, W]; returns a new tensor of the same rank.
  Tensor operator()(const Tensor& x, Generator& gen) const;

 protected:
  // The work: x is always a contiguous batch [N, C, H, W].
  virtual Tensor apply(const Tensor& x, Generator& gen) const = 0;
};

// (x - mean[c]) / std[c] per channel, float32 or float64. One value of mean/std serves all channels.
class NormalizeImages : public ImageKernel {
 public:
  NormalizeImages(std::vector<double> mean, std::vector<double> stddev);

 protected:
  Tensor apply(const Tensor& x, Generator& gen) const override;

 private:
  std::vector<double> mean_, stddev_;
};

// A random height x width window of the image zero-padded by `padding` on every side.
class CropImages : public ImageKernel {
 public:
  CropImages(int64_t height, int64_t width, int64_t padding);

 protected:
  Tensor apply(const Tensor& x, Generator& gen) const override;

 private:
  int64_t height_, width_, padding_;
};

// Mirrors each image left-right with probability p.
class FlipImages : public ImageKernel {
 public:
  explicit FlipImages(double p);

 protected:
  Tensor apply(const Tensor& x, Generator& gen) const override;

 private:
  double p_;
};

}  // namespace transforms::detail

}  // namespace gr::data
