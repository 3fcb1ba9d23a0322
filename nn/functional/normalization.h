// gr::nn::functional's normalisation layers (libtorch's torch/nn/functional/normalization.h):
//   F::layer_norm(x, F::LayerNormFuncOptions({C}).weight(w).bias(b).eps(1e-5))
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "autograd/ops.h"
#include "nn/options.h"

namespace gr::nn::functional {

struct LayerNormFuncOptions {
  LayerNormFuncOptions(std::vector<int64_t> normalized_shape) : normalized_shape_(std::move(normalized_shape)) {}
  GR_ARG(std::vector<int64_t>, normalized_shape);
  GR_ARG(Tensor, weight);
  GR_ARG(Tensor, bias);
  GR_ARG(double, eps) = 1e-5;
};
inline Tensor layer_norm(const Tensor& input, const LayerNormFuncOptions& o) {
  return gr::layer_norm(input, o.normalized_shape(), o.weight(), o.bias(), o.eps());
}

// eps nullopt: the input dtype's machine epsilon.
struct RMSNormFuncOptions {
  RMSNormFuncOptions(std::vector<int64_t> normalized_shape) : normalized_shape_(std::move(normalized_shape)) {}
  GR_ARG(std::vector<int64_t>, normalized_shape);
  GR_ARG(Tensor, weight);
  GR_ARG(std::optional<double>, eps) = std::nullopt;
};
inline Tensor rms_norm(const Tensor& input, const RMSNormFuncOptions& o) {
  return gr::rms_norm(input, o.normalized_shape(), o.weight(), o.eps());
}

struct GroupNormFuncOptions {
  GroupNormFuncOptions(int64_t num_groups) : num_groups_(num_groups) {}
  GR_ARG(int64_t, num_groups);
  GR_ARG(Tensor, weight);
  GR_ARG(Tensor, bias);
  GR_ARG(double, eps) = 1e-5;
};
inline Tensor group_norm(const Tensor& input, const GroupNormFuncOptions& o) {
  return gr::group_norm(input, o.num_groups(), o.weight(), o.bias(), o.eps());
}

struct InstanceNormFuncOptions {
  GR_ARG(Tensor, running_mean);
  GR_ARG(Tensor, running_var);
  GR_ARG(Tensor, weight);
  GR_ARG(Tensor, bias);
  GR_ARG(bool, use_input_stats) = true;
  GR_ARG(double, momentum) = 0.1;
  GR_ARG(double, eps) = 1e-5;
};
inline Tensor instance_norm(const Tensor& input, const InstanceNormFuncOptions& o = {}) {
  return gr::instance_norm(input, o.weight(), o.bias(), o.running_mean(), o.running_var(), o.use_input_stats(),
                           o.momentum(), o.eps());
}

}  // namespace gr::nn::functional
