// Linear: y = x W^T + b, with W [out_features, in_features] (PyTorch's default init).
#pragma once

#include "nn/module.h"
#include "nn/module_holder.h"
#include "nn/options.h"

namespace gr::nn {

struct LinearOptions {
  LinearOptions(int64_t in_features, int64_t out_features) : in_features_(in_features), out_features_(out_features) {}
  GR_ARG(int64_t, in_features);
  GR_ARG(int64_t, out_features);
  GR_ARG(bool, bias) = true;
};

class LinearImpl : public Module {
 public:
  LinearImpl(int64_t in_features, int64_t out_features) : LinearImpl(LinearOptions(in_features, out_features)) {}
  explicit LinearImpl(const LinearOptions& options);
  // Weight and bias ~ U(-1/sqrt(in), 1/sqrt(in)), as torch's kaiming_uniform_(a=sqrt(5)).
  void reset_parameters();
  Tensor forward(const Tensor& x);
  void pretty_print(std::ostream& out) const override;

  LinearOptions options;
  Tensor weight, bias;
};
GR_MODULE(Linear);

}  // namespace gr::nn
