// gr::nn::functional's convolutions (libtorch's torch/nn/functional/conv.h), e.g.
//   F::conv1d(x, w, F::Conv1dFuncOptions().stride(2).padding(1))
//   F::conv_transpose2d(x, w, F::ConvTranspose2dFuncOptions().stride(2).output_padding(1))
#pragma once

#include "autograd/ops.h"
#include "nn/options.h"

namespace gr::nn::functional {

template <size_t D>
struct ConvFuncOptions {
  GR_ARG(Tensor, bias);
  GR_ARG(ExpandingArray<D>, stride) = 1;
  GR_ARG(ExpandingArray<D>, padding) = 0;
  GR_ARG(ExpandingArray<D>, dilation) = 1;
  GR_ARG(int64_t, groups) = 1;
};
using Conv1dFuncOptions = ConvFuncOptions<1>;
using Conv2dFuncOptions = ConvFuncOptions<2>;

template <size_t D>
struct ConvTransposeFuncOptions {
  GR_ARG(Tensor, bias);
  GR_ARG(ExpandingArray<D>, stride) = 1;
  GR_ARG(ExpandingArray<D>, padding) = 0;
  GR_ARG(ExpandingArray<D>, output_padding) = 0;
  GR_ARG(int64_t, groups) = 1;
  GR_ARG(ExpandingArray<D>, dilation) = 1;
};
using ConvTranspose1dFuncOptions = ConvTransposeFuncOptions<1>;
using ConvTranspose2dFuncOptions = ConvTransposeFuncOptions<2>;

inline Tensor conv1d(const Tensor& input, const Tensor& weight, const Conv1dFuncOptions& o = {}) {
  return gr::conv1d(input, weight, o.bias(), o.stride(), o.padding(), o.dilation(), o.groups());
}
inline Tensor conv2d(const Tensor& input, const Tensor& weight, const Conv2dFuncOptions& o = {}) {
  return gr::conv2d(input, weight, o.bias(), o.stride(), o.padding(), o.dilation(), o.groups());
}
inline Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const ConvTranspose1dFuncOptions& o = {}) {
  return gr::conv_transpose1d(input, weight, o.bias(), o.stride(), o.padding(), o.output_padding(), o.groups(),
                              o.dilation());
}
inline Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const ConvTranspose2dFuncOptions& o = {}) {
  return gr::conv_transpose2d(input, weight, o.bias(), o.stride(), o.padding(), o.output_padding(), o.groups(),
                              o.dilation());
}

}  // namespace gr::nn::functional
