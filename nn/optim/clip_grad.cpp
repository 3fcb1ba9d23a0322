// Gradient norm clipping.
#include "nn/optim/clip_grad.h"

#include <cmath>

#include "autograd/grad_mode.h"
#include "core/native/elementwise.h"
#include "core/native/reduce.h"

namespace gr::nn::utils {

double clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type) {
  GR_CHECK(norm_type > 0, "clip_grad_norm_: norm_type must be positive, got ", norm_type);
  NoGradGuard no_grad;
  std::vector<Tensor> grads;
  for (const Tensor& p : parameters)
    if (p.grad().defined()) grads.push_back(p.grad());
  if (grads.empty()) return 0.0;
  double total = 0.0;
  const bool inf = std::isinf(norm_type);
  for (const Tensor& g : grads) {
    Tensor a = native::abs(g);
    if (inf) {
      total = std::max(total, native::max(a).item<double>());
    } else {
      total += native::sum(native::pow(a, norm_type)).item<double>();
    }
  }
  if (!inf) total = std::pow(total, 1.0 / norm_type);
  double coef = std::min(1.0, max_norm / (total + 1e-6));
  if (coef < 1.0)
    for (const Tensor& g : grads) native::mul_(g, native::wrapped_scalar(g, coef));
  return total;
}

}  // namespace gr::nn::utils
