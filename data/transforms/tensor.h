// Transforms of an example's data tensor: TensorTransform, TensorLambda and Normalize.
#pragma once

#include <functional>
#include <utility>
#include <vector>

#include "data/example.h"
#include "data/transforms.h"
#include "data/transforms/base.h"

namespace gr::data::transforms {

// Changes an example's data and keeps its target.
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

// (x - mean[c]) / stddev[c] per channel of an image [C, H, W] (one value serves every
// channel): Normalize<>(0.1307, 0.3081) or Normalize<>({0.5, 0.5, 0.5}, {0.2, 0.2, 0.2}).
// The arithmetic is gradring's Normalize (data/transforms.h).
template <typename Target = Tensor>
struct Normalize : public TensorTransform<Target> {
  Normalize(double mean, double stddev) : Normalize(std::vector<double>{mean}, std::vector<double>{stddev}) {}
  Normalize(std::vector<double> mean, std::vector<double> stddev) : normalize_(std::move(mean), std::move(stddev)) {}

  Tensor operator()(Tensor input) override { return normalize_(input); }

 private:
  data::Normalize normalize_;
};

}  // namespace gr::data::transforms
