// MaxPool2d, AvgPool2d and AdaptiveAvgPool2d layers (no parameters).
#pragma once

#include <optional>

#include "nn/module.h"
#include "nn/module_holder.h"
#include "nn/options.h"

namespace gr::nn {

struct MaxPool2dOptions {
  MaxPool2dOptions(ExpandingArray<2> kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}
  GR_ARG(ExpandingArray<2>, kernel_size);
  GR_ARG(ExpandingArray<2>, stride);  // defaults to kernel_size
  GR_ARG(ExpandingArray<2>, padding) = 0;
  GR_ARG(ExpandingArray<2>, dilation) = 1;
  GR_ARG(bool, ceil_mode) = false;
};

class MaxPool2dImpl : public Module {
 public:
  explicit MaxPool2dImpl(ExpandingArray<2> kernel_size) : MaxPool2dImpl(MaxPool2dOptions(kernel_size)) {}
  explicit MaxPool2dImpl(const MaxPool2dOptions& options) : Module("gr::nn::MaxPool2d"), options(options) {}
  Tensor forward(const Tensor& x);
  void pretty_print(std::ostream& out) const override;
  MaxPool2dOptions options;
};
GR_MODULE(MaxPool2d);

struct AvgPool2dOptions {
  AvgPool2dOptions(ExpandingArray<2> kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}
  GR_ARG(ExpandingArray<2>, kernel_size);
  GR_ARG(ExpandingArray<2>, stride);  // defaults to kernel_size
  GR_ARG(ExpandingArray<2>, padding) = 0;
  GR_ARG(bool, ceil_mode) = false;
  GR_ARG(bool, count_include_pad) = true;
};

class AvgPool2dImpl : public Module {
 public:
  explicit AvgPool2dImpl(ExpandingArray<2> kernel_size) : AvgPool2dImpl(AvgPool2dOptions(kernel_size)) {}
  explicit AvgPool2dImpl(const AvgPool2dOptions& options) : Module("gr::nn::AvgPool2d"), options(options) {}
  Tensor forward(const Tensor& x);
  void pretty_print(std::ostream& out) const override;
  AvgPool2dOptions options;
};
GR_MODULE(AvgPool2d);

struct AdaptiveAvgPool2dOptions {
  AdaptiveAvgPool2dOptions(ExpandingArray<2> output_size) : output_size_(output_size) {}
  GR_ARG(ExpandingArray<2>, output_size);
};

class AdaptiveAvgPool2dImpl : public Module {
 public:
  explicit AdaptiveAvgPool2dImpl(ExpandingArray<2> output_size)
      : AdaptiveAvgPool2dImpl(AdaptiveAvgPool2dOptions(output_size)) {}
  explicit AdaptiveAvgPool2dImpl(const AdaptiveAvgPool2dOptions& options)
      : Module("gr::nn::AdaptiveAvgPool2d"), options(options) {}
  Tensor forward(const Tensor& x);
  void pretty_print(std::ostream& out) const override;
  AdaptiveAvgPool2dOptions options;
};
GR_MODULE(AdaptiveAvgPool2d);

}  // namespace gr::nn
