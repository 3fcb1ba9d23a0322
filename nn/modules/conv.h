// Convolution layers (libtorch's torch/nn/modules/conv.h): Conv1d and Conv2d over [N, C, L] /
// [N, C, H, W], and the transposed ConvTranspose1d / ConvTranspose2d (DCGAN generators,
// decoders), with stride, padding, dilation, groups and, for the transposed ones, output_padding.
#pragma once

#include <optional>

#include "nn/module.h"
#include "nn/module_holder.h"
#include "nn/options.h"

namespace gr::nn {

template <size_t D>
struct ConvOptions {
  ConvOptions(int64_t in_channels, int64_t out_channels, ExpandingArray<D> kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  GR_ARG(int64_t, in_channels);
  GR_ARG(int64_t, out_channels);
  GR_ARG(ExpandingArray<D>, kernel_size);
  GR_ARG(ExpandingArray<D>, stride) = 1;
  GR_ARG(ExpandingArray<D>, padding) = 0;
  GR_ARG(ExpandingArray<D>, dilation) = 1;
  GR_ARG(int64_t, groups) = 1;
  GR_ARG(bool, bias) = true;
};
using Conv1dOptions = ConvOptions<1>;
using Conv2dOptions = ConvOptions<2>;

template <size_t D>
struct ConvTransposeOptions {
  ConvTransposeOptions(int64_t in_channels, int64_t out_channels, ExpandingArray<D> kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  GR_ARG(int64_t, in_channels);
  GR_ARG(int64_t, out_channels);
  GR_ARG(ExpandingArray<D>, kernel_size);
  GR_ARG(ExpandingArray<D>, stride) = 1;
  GR_ARG(ExpandingArray<D>, padding) = 0;
  // Extra rows/columns on one side of the output (below the stride or the dilation): picks
  // among the output sizes that a strided convolution maps to the same input size.
  GR_ARG(ExpandingArray<D>, output_padding) = 0;
  GR_ARG(int64_t, groups) = 1;
  GR_ARG(bool, bias) = true;
  GR_ARG(ExpandingArray<D>, dilation) = 1;
};
using ConvTranspose1dOptions = ConvTransposeOptions<1>;
using ConvTranspose2dOptions = ConvTransposeOptions<2>;

// What the four layers share (libtorch's ConvNdImpl): the options, the weight ([out, in /
// groups, k...], or [in, out / groups, k...] when transposed) and bias [out], PyTorch's
// init, and printing. Its members are defined (and instantiated for the four layers) in conv.cpp.
template <size_t D, class Options>
class ConvNdImpl : public Module {
 public:
  static constexpr bool transposed = requires(const Options& o) { o.output_padding(); };
  ConvNdImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<D> kernel_size)
      : ConvNdImpl(Options(in_channels, out_channels, kernel_size)) {}
  explicit ConvNdImpl(const Options& options);
  // As torch: weight kaiming_uniform_(a=sqrt(5)), bias U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
  void reset_parameters();
  void pretty_print(std::ostream& out) const override;

  Options options;
  Tensor weight, bias;
};

class Conv1dImpl : public ConvNdImpl<1, Conv1dOptions> {
 public:
  using ConvNdImpl::ConvNdImpl;
  Tensor forward(const Tensor& input);
};
GR_MODULE(Conv1d);

class Conv2dImpl : public ConvNdImpl<2, Conv2dOptions> {
 public:
  using ConvNdImpl::ConvNdImpl;
  Tensor forward(const Tensor& input);
};
GR_MODULE(Conv2d);

// forward(input, output_size): output_size (the spatial sizes, optionally preceded by N and C)
// picks the output_padding that gives that size, as libtorch's.
class ConvTranspose1dImpl : public ConvNdImpl<1, ConvTranspose1dOptions> {
 public:
  using ConvNdImpl::ConvNdImpl;
  Tensor forward(const Tensor& input, const std::optional<IntArrayRef>& output_size = std::nullopt);
};
GR_MODULE(ConvTranspose1d);

class ConvTranspose2dImpl : public ConvNdImpl<2, ConvTranspose2dOptions> {
 public:
  using ConvNdImpl::ConvNdImpl;
  Tensor forward(const Tensor& input, const std::optional<IntArrayRef>& output_size = std::nullopt);
};
GR_MODULE(ConvTranspose2d);

}  // namespace gr::nn
