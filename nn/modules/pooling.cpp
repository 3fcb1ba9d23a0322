// Pooling layers.
#include "nn/modules/pooling.h"

#include "autograd/ops.h"

namespace gr::nn {

Tensor MaxPool2dImpl::forward(const Tensor& x) {
  return gr::max_pool2d(x, options.kernel_size(), options.stride(), options.padding(), options.dilation(),
                        options.ceil_mode());
}

void MaxPool2dImpl::pretty_print(std::ostream& out) const {
  out << "gr::nn::MaxPool2d(kernel_size=" << options.kernel_size() << ", stride=" << options.stride()
      << ", padding=" << options.padding() << ", dilation=" << options.dilation()
      << ", ceil_mode=" << (options.ceil_mode() ? "true" : "false") << ")";
}

Tensor AvgPool2dImpl::forward(const Tensor& x) {
  return gr::avg_pool2d(x, options.kernel_size(), options.stride(), options.padding(), options.ceil_mode(),
                        options.count_include_pad());
}

void AvgPool2dImpl::pretty_print(std::ostream& out) const {
  out << "gr::nn::AvgPool2d(kernel_size=" << options.kernel_size() << ", stride=" << options.stride()
      << ", padding=" << options.padding() << ")";
}

Tensor AdaptiveAvgPool2dImpl::forward(const Tensor& x) { return gr::adaptive_avg_pool2d(x, options.output_size()); }

void AdaptiveAvgPool2dImpl::pretty_print(std::ostream& out) const {
  out << "gr::nn::AdaptiveAvgPool2d(output_size=" << options.output_size() << ")";
}

}  // namespace gr::nn
