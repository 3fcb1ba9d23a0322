// Dropout2d (libtorch's torch/nn/modules/dropout.h): zeroes whole channels of [N, C, H, W]
// (or unbatched [C, H, W]) with probability p in training, scaling the rest by 1 / (1 - p).
// Dropout itself lives in basic.h.
#pragma once

#include "nn/module.h"
#include "nn/module_holder.h"
#include "nn/options.h"

namespace gr::nn {

struct Dropout2dOptions {
  Dropout2dOptions(double p = 0.5) : p_(p) {}
  GR_ARG(double, p);
  GR_ARG(bool, inplace) = false;
};

class Dropout2dImpl : public Module {
 public:
  explicit Dropout2dImpl(double p) : Dropout2dImpl(Dropout2dOptions(p)) {}
  explicit Dropout2dImpl(const Dropout2dOptions& options = {});
  Tensor forward(const Tensor& x);
  void pretty_print(std::ostream& out) const override;
  Dropout2dOptions options;
};
GR_MODULE(Dropout2d);

namespace functional {
struct Dropout2dFuncOptions {
  GR_ARG(double, p) = 0.5;
  GR_ARG(bool, training) = true;
  GR_ARG(bool, inplace) = false;
};
Tensor dropout2d(const Tensor& input, const Dropout2dFuncOptions& options = {});
}  // namespace functional

}  // namespace gr::nn
