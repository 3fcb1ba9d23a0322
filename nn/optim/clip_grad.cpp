// Gradient clipping and parameter flattening (gr::nn::utils).
#include "nn/optim/clip_grad.h"

#include <cmath>

#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "core/native/copy/copy.h"

namespace gr::nn::utils {

double clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type,
                       bool error_if_nonfinite) {
  GR_CHECK(norm_type > 0, "clip_grad_norm_: norm_type must be positive, got ", norm_type);
  NoGradGuard no_grad;
  std::vector<Tensor> grads;
  for (const Tensor& p : parameters)
    if (p.defined() && p.grad().defined()) grads.push_back(p.grad());
  if (grads.empty()) return 0.0;
  // One norm per gradient on its device, then the norm of the norms: a single host sync.
  std::vector<Tensor> norms;
  for (const Tensor& g : grads) norms.push_back(linalg::vector_norm(g, norm_type).to(kFloat64));
  const double total = linalg::vector_norm(stack(norms), norm_type).item<double>();
  GR_CHECK(!error_if_nonfinite || std::isfinite(total), "clip_grad_norm_: the total norm of order ", norm_type,
           " for gradients from `parameters` is non-finite, so it cannot be clipped. To disable this error and scale "
           "the gradients by the non-finite norm anyway, set `error_if_nonfinite=false`");
  const double coef = max_norm / (total + 1e-6);
  if (coef < 1.0 || std::isnan(coef))
    for (const Tensor& g : grads) g.mul_(coef);
  return total;
}
double clip_grad_norm_(std::initializer_list<Tensor> parameters, double max_norm, double norm_type,
                       bool error_if_nonfinite) {
  return clip_grad_norm_(std::vector<Tensor>(parameters), max_norm, norm_type, error_if_nonfinite);
}
double clip_grad_norm_(const Tensor& parameter, double max_norm, double norm_type, bool error_if_nonfinite) {
  return clip_grad_norm_(std::vector<Tensor>{parameter}, max_norm, norm_type, error_if_nonfinite);
}

void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value) {
  NoGradGuard no_grad;
  for (const Tensor& p : parameters)
    if (p.defined() && p.grad().defined()) p.grad().clamp_(-clip_value, clip_value);
}
void clip_grad_value_(std::initializer_list<Tensor> parameters, double clip_value) {
  clip_grad_value_(std::vector<Tensor>(parameters), clip_value);
}
void clip_grad_value_(const Tensor& parameter, double clip_value) {
  clip_grad_value_(std::vector<Tensor>{parameter}, clip_value);
}

Tensor parameters_to_vector(const std::vector<Tensor>& parameters) {
  GR_CHECK(!parameters.empty(), "parameters_to_vector: expected at least one parameter");
  std::vector<Tensor> flat;
  for (const Tensor& p : parameters) {
    GR_CHECK(p.device() == parameters[0].device(), "parameters_to_vector: found two parameters on different devices (",
             parameters[0].device().str(), " and ", p.device().str(), "): this is currently not supported");
    flat.push_back(p.reshape({-1}));
  }
  return cat(flat);
}

void vector_to_parameters(const Tensor& vec, const std::vector<Tensor>& parameters) {
  GR_CHECK(vec.defined() && vec.dim() == 1, "vector_to_parameters: expected vec to be a 1-d tensor, got shape ",
           vec.defined() ? vec.sizes() : IntArrayRef());
  int64_t total = 0;
  for (const Tensor& p : parameters) total += p.numel();
  GR_CHECK(vec.numel() == total, "vector_to_parameters: vec has ", vec.numel(), " elements but the parameters have ",
           total);
  NoGradGuard no_grad;
  int64_t offset = 0;
  for (const Tensor& p : parameters) {
    native::copy_(p, vec.narrow(0, offset, p.numel()).view(p.sizes()));
    offset += p.numel();
  }
}

}  // namespace gr::nn::utils
