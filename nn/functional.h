// gr::nn::functional: the layers as functions with libtorch-style option structs, e.g.
//   namespace F = gr::nn::functional;
//   F::max_pool2d(x, F::MaxPool2dFuncOptions(2)); F::nll_loss(y, t, F::NLLLossFuncOptions().reduction(gr::kSum));
#pragma once

#include <optional>

#include "autograd/ops.h"
#include "nn/functional/activation.h"
#include "nn/functional/attention.h"
#include "nn/functional/conv.h"
#include "nn/functional/embedding.h"
#include "nn/functional/loss.h"
#include "nn/functional/normalization.h"
#include "nn/functional/padding.h"
#include "nn/functional/upsampling.h"
#include "nn/functional/pixelshuffle.h"
#include "nn/modules/pooling.h"
#include "nn/options.h"

namespace gr::nn::functional {

inline Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = {}) {
  return gr::linear(x, weight, bias);
}

inline Tensor relu(const Tensor& x) { return gr::relu(x); }

using MaxPool2dFuncOptions = MaxPool2dOptions;
inline Tensor max_pool2d(const Tensor& x, const MaxPool2dFuncOptions& o) {
  return gr::max_pool2d(x, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode());
}
inline std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& x, const MaxPool2dFuncOptions& o) {
  return gr::max_pool2d_with_indices(x, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode());
}
using AvgPool2dFuncOptions = AvgPool2dOptions;
inline Tensor avg_pool2d(const Tensor& x, const AvgPool2dFuncOptions& o) {
  return gr::avg_pool2d(x, o.kernel_size(), o.stride(), o.padding(), o.ceil_mode(), o.count_include_pad());
}
using AdaptiveAvgPool2dFuncOptions = AdaptiveAvgPool2dOptions;
inline Tensor adaptive_avg_pool2d(const Tensor& x, const AdaptiveAvgPool2dFuncOptions& o) {
  return gr::adaptive_avg_pool2d(x, o.output_size());
}
inline Tensor adaptive_avg_pool2d(const Tensor& x, ExpandingArray<2> output_size) {
  return gr::adaptive_avg_pool2d(x, output_size);
}

struct BatchNormFuncOptions {
  GR_ARG(Tensor, weight);
  GR_ARG(Tensor, bias);
  GR_ARG(bool, training) = false;
  GR_ARG(double, momentum) = 0.1;
  GR_ARG(double, eps) = 1e-5;
};
inline Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                         const BatchNormFuncOptions& o = {}) {
  return gr::batch_norm(x, o.weight(), o.bias(), running_mean, running_var, o.training(), o.momentum(), o.eps());
}

struct DropoutFuncOptions {
  GR_ARG(double, p) = 0.5;
  GR_ARG(bool, training) = true;
};
inline Tensor dropout(const Tensor& x, const DropoutFuncOptions& o = {}) { return gr::dropout(x, o.p(), o.training()); }

inline Tensor log_softmax(const Tensor& x, int64_t dim) { return gr::log_softmax(x, dim); }
inline Tensor softmax(const Tensor& x, int64_t dim) { return gr::softmax(x, dim); }

}  // namespace gr::nn::functional
