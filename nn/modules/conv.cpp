// Conv2d layer.
#include "nn/modules/conv.h"

#include <cmath>

#include "autograd/ops.h"
#include "core/factory.h"
#include "nn/init.h"

namespace gr::nn {

Conv2dImpl::Conv2dImpl(const Conv2dOptions& o) : Module("gr::nn::Conv2d"), options(o) {
  GR_CHECK(o.in_channels() > 0 && o.out_channels() > 0, "Conv2d: channel counts must be positive, got ",
           o.in_channels(), " and ", o.out_channels());
  GR_CHECK(o.groups() > 0 && o.in_channels() % o.groups() == 0 && o.out_channels() % o.groups() == 0,
           "Conv2d: in_channels (", o.in_channels(), ") and out_channels (", o.out_channels(),
           ") must be divisible by groups (", o.groups(), ")");
  weight = register_parameter(
      "weight", empty({o.out_channels(), o.in_channels() / o.groups(), o.kernel_size()[0], o.kernel_size()[1]}));
  if (o.bias()) bias = register_parameter("bias", empty({o.out_channels()}));
  reset_parameters();
}

void Conv2dImpl::reset_parameters() {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    auto [fan_in, fan_out] = init::calculate_fan_in_and_fan_out(weight);
    double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
    init::uniform_(bias, -bound, bound);
  }
}

Tensor Conv2dImpl::forward(const Tensor& x) {
  return gr::conv2d(x, weight, bias, options.stride(), options.padding(), options.dilation(), options.groups());
}

void Conv2dImpl::pretty_print(std::ostream& out) const {
  out << "gr::nn::Conv2d(" << options.in_channels() << ", " << options.out_channels()
      << ", kernel_size=" << options.kernel_size() << ", stride=" << options.stride();
  if (!(options.padding() == ExpandingArray<2>(0))) out << ", padding=" << options.padding();
  if (!(options.dilation() == ExpandingArray<2>(1))) out << ", dilation=" << options.dilation();
  if (options.groups() != 1) out << ", groups=" << options.groups();
  if (!options.bias()) out << ", bias=false";
  out << ")";
}

}  // namespace gr::nn
