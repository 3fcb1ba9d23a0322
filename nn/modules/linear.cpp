// Linear layer.
#include "nn/modules/linear.h"

#include <cmath>

#include "autograd/ops.h"
#include "core/factory.h"
#include "nn/init.h"

namespace gr::nn {

LinearImpl::LinearImpl(const LinearOptions& o) : Module("gr::nn::Linear"), options(o) {
  GR_CHECK(o.in_features() > 0 && o.out_features() > 0, "Linear: in_features and out_features must be positive, got ",
           o.in_features(), " and ", o.out_features());
  weight = register_parameter("weight", empty({o.out_features(), o.in_features()}));
  if (o.bias()) bias = register_parameter("bias", empty({o.out_features()}));
  reset_parameters();
}

void LinearImpl::reset_parameters() {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    double bound = 1.0 / std::sqrt(static_cast<double>(options.in_features()));
    init::uniform_(bias, -bound, bound);
  }
}

Tensor LinearImpl::forward(const Tensor& x) { return gr::linear(x, weight, bias); }

void LinearImpl::pretty_print(std::ostream& out) const {
  out << "gr::nn::Linear(in_features=" << options.in_features() << ", out_features=" << options.out_features()
      << ", bias=" << (options.bias() ? "true" : "false") << ")";
}

}  // namespace gr::nn
