// Dropout2d: a channel mask drawn by gr::dropout on [N, C, 1, 1] ones, broadcast over H, W.
#include "nn/modules/dropout.h"

#include "autograd/ops.h"
#include "core/factory.h"

namespace gr::nn {

namespace functional {
Tensor dropout2d(const Tensor& input, const Dropout2dFuncOptions& o) {
  GR_CHECK(o.p() >= 0.0 && o.p() <= 1.0, "dropout2d: probability has to be between 0 and 1, but got ", o.p());
  GR_CHECK(input.dim() == 3 || input.dim() == 4, "dropout2d: expected 3D (unbatched) or 4D input, got input of shape ",
           input.sizes());
  if (!o.training() || o.p() == 0.0) return input;
  std::vector<int64_t> mask_shape(input.sizes().begin(), input.sizes().end());
  for (int64_t d = input.dim() - 2; d < input.dim(); ++d) mask_shape[static_cast<size_t>(d)] = 1;
  Tensor mask = gr::dropout(ones(mask_shape, input.options()), o.p(), true);  // 0 or 1 / (1 - p) per channel
  if (!o.inplace()) return input * mask;
  input.mul_(mask);
  return input;
}
}  // namespace functional

Dropout2dImpl::Dropout2dImpl(const Dropout2dOptions& o) : Module("gr::nn::Dropout2d"), options(o) {
  GR_CHECK(o.p() >= 0.0 && o.p() <= 1.0, "Dropout2d: probability has to be between 0 and 1, but got ", o.p());
}

Tensor Dropout2dImpl::forward(const Tensor& x) {
  return functional::dropout2d(
      x, functional::Dropout2dFuncOptions().p(options.p()).training(is_training()).inplace(options.inplace()));
}

void Dropout2dImpl::pretty_print(std::ostream& out) const {
  out << "gr::nn::Dropout2d(p=" << options.p() << ", inplace=" << (options.inplace() ? "true" : "false") << ")";
}

}  // namespace gr::nn
