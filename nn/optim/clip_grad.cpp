// Gradient clipping and parameter flattening (gr::nn::utils).
#include "nn/optim/clip_grad.h"

#include <cmath>

#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "core/native/copy.h"
#include "core/native/foreach.h"

namespace gr::nn::utils {

namespace {
std::vector<Tensor> grads_of(const std::vector<Tensor>& parameters) {
  std::vector<Tensor> grads;
  for (const Tensor& p : parameters)
    if (p.defined() && p.grad().defined()) grads.push_back(p.grad());
  return grads;
}

void check_finite(double total, double norm_type) {
  GR_CHECK(std::isfinite(total), "clip_grad_norm_: the total norm of order ", norm_type,
           " for gradients from `parameters` is non-finite, so it cannot be clipped. To disable this error and scale "
           "the gradients by the non-finite norm anyway, set `error_if_nonfinite=false`");
}
}  // namespace

Tensor get_total_norm(const std::vector<Tensor>& tensors, double norm_type, bool error_if_nonfinite) {
  GR_CHECK(norm_type > 0, "get_total_norm: norm_type must be positive, got ", norm_type);
  NoGradGuard no_grad;
  std::vector<Tensor> defined;
  for (const Tensor& t : tensors)
    if (t.defined()) defined.push_back(t);
  // Each tensor's norm on its device, then the norm of the norms (native::foreach_norm).
  Tensor total = native::foreach_norm(defined, norm_type);
  if (error_if_nonfinite) check_finite(total.item<double>(), norm_type);
  return total;
}

void clip_grads_with_norm_(const std::vector<Tensor>& parameters, double max_norm, const Tensor& total_norm) {
  NoGradGuard no_grad;
  native::foreach_clip_(grads_of(parameters), total_norm, max_norm);
}

double clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type,
                       bool error_if_nonfinite) {
  GR_CHECK(norm_type > 0, "clip_grad_norm_: norm_type must be positive, got ", norm_type);
  NoGradGuard no_grad;
  const std::vector<Tensor> grads = grads_of(parameters);
  if (grads.empty()) return 0.0;
  const Tensor total_norm = native::foreach_norm(grads, norm_type);
  const double total = total_norm.item<double>();  // the one host synchronisation
  if (error_if_nonfinite) check_finite(total, norm_type);
  native::foreach_clip_(grads, total_norm, max_norm);
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
