// Conv2d: 2-D convolution over [N, C, H, W] with stride, padding, dilation and groups.
#pragma once

#include "nn/module.h"
#include "nn/module_holder.h"
#include "nn/options.h"

namespace gr::nn {

struct Conv2dOptions {
  Conv2dOptions(int64_t in_channels, int64_t out_channels, ExpandingArray<2> kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  GR_ARG(int64_t, in_channels);
  GR_ARG(int64_t, out_channels);
  GR_ARG(ExpandingArray<2>, kernel_size);
  GR_ARG(ExpandingArray<2>, stride) = 1;
  GR_ARG(ExpandingArray<2>, padding) = 0;
  GR_ARG(ExpandingArray<2>, dilation) = 1;
  GR_ARG(int64_t, groups) = 1;
  GR_ARG(bool, bias) = true;
};

class Conv2dImpl : public Module {
 public:
  Conv2dImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<2> kernel_size)
      : Conv2dImpl(Conv2dOptions(in_channels, out_channels, kernel_size)) {}
  explicit Conv2dImpl(const Conv2dOptions& options);
  // As torch: weight kaiming_uniform_(a=sqrt(5)), bias U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
  void reset_parameters();
  Tensor forward(const Tensor& x);
  void pretty_print(std::ostream& out) const override;

  Conv2dOptions options;
  Tensor weight, bias;
};
GR_MODULE(Conv2d);

}  // namespace gr::nn
