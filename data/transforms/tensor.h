// Transforms of an example's data tensor: TensorTransform, TensorLambda and Normalize (as
// torch::data's), and the random image transforms RandomCrop and RandomHorizontalFlip (as
// torchvision's). Each also applies to a stacked batch: dataset.map(Stack<>()).map(t).
#pragma once

#include <functional>
#include <utility>
#include <vector>

#include "data/batch_context.h"
#include "data/example.h"
#include "data/transforms/base.h"
#include "data/transforms/image.h"

namespace gr::data::transforms {

// Changes an example's data and keeps its target. Mapped after Stack, it changes the whole
// batch's data at once (gradring; libtorch maps it on examples only).
template <typename Target = Tensor>
class TensorTransform : public Transform<Example<Tensor, Target>, Example<Tensor, Target>> {
 public:
  using E = Example<Tensor, Target>;

  virtual Tensor operator()(Tensor input) = 0;

  E apply(E input) override {
    input.data = (*this)(std::move(input.data));
    return input;
  }
};

template <typename Target = Tensor>
class TensorLambda : public TensorTransform<Target> {
 public:
  using FunctionType = std::function<Tensor(Tensor)>;

  explicit TensorLambda(FunctionType function) : function_(std::move(function)) {}
  Tensor operator()(Tensor input) override { return function_(std::move(input)); }

 private:
  FunctionType function_;
};

// (x - mean[c]) / stddev[c] per channel of a float image [C, H, W] or batch [N, C, H, W] (one
// value serves every channel): Normalize<>(0.1307, 0.3081) or Normalize<>({0.5, 0.5, 0.5}, {0.2, 0.2, 0.2}).
template <typename Target = Tensor>
class Normalize : public TensorTransform<Target> {
 public:
  Normalize(double mean, double stddev) : Normalize(std::vector<double>{mean}, std::vector<double>{stddev}) {}
  Normalize(std::vector<double> mean, std::vector<double> stddev) : kernel_(std::move(mean), std::move(stddev)) {}

  Tensor operator()(Tensor input) override { return kernel_(input, batch_generator()); }

 private:
  detail::NormalizeImages kernel_;
};

// A random size x size (or height x width) window of the image zero-padded by `padding` on
// every side, of any dtype. Draws from batch_generator(), or from `gen`; see Note [Transform
// randomness].
template <typename Target = Tensor>
class RandomCrop : public TensorTransform<Target> {
 public:
  explicit RandomCrop(int64_t size, int64_t padding = 0) : RandomCrop(size, size, padding) {}
  RandomCrop(int64_t height, int64_t width, int64_t padding) : kernel_(height, width, padding) {}

  Tensor operator()(Tensor input) override { return kernel_(input, batch_generator()); }
  Tensor operator()(const Tensor& input, Generator& gen) const { return kernel_(input, gen); }

 private:
  detail::CropImages kernel_;
};

// Mirrors each image left-right with probability p. Draws as RandomCrop does.
template <typename Target = Tensor>
class RandomHorizontalFlip : public TensorTransform<Target> {
 public:
  explicit RandomHorizontalFlip(double p = 0.5) : kernel_(p) {}

  Tensor operator()(Tensor input) override { return kernel_(input, batch_generator()); }
  Tensor operator()(const Tensor& input, Generator& gen) const { return kernel_(input, gen); }

 private:
  detail::FlipImages kernel_;
};

}  // namespace gr::data::transforms
