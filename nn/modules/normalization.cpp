// LayerNorm, RMSNorm, GroupNorm and InstanceNorm1d/2d/3d layers.
#include "nn/modules/normalization.h"

#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "core/factory.h"
#include "nn/init.h"

namespace gr::nn {

namespace {
const char* bool_str(bool b) { return b ? "true" : "false"; }
}  // namespace

LayerNormImpl::LayerNormImpl(const LayerNormOptions& o) : Module("gr::nn::LayerNorm"), options(o) { reset(); }

void LayerNormImpl::reset() {
  if (options.elementwise_affine()) {
    weight = register_parameter("weight", gr::empty(IntArrayRef(options.normalized_shape())));
    bias = register_parameter("bias", gr::empty(IntArrayRef(options.normalized_shape())));
  }
  reset_parameters();
}

void LayerNormImpl::reset_parameters() {
  if (!options.elementwise_affine()) return;
  init::ones_(weight);
  init::zeros_(bias);
}

Tensor LayerNormImpl::forward(const Tensor& input) {
  return gr::layer_norm(input, options.normalized_shape(), weight, bias, options.eps());
}

void LayerNormImpl::pretty_print(std::ostream& out) const {
  out << "gr::nn::LayerNorm(" << IntArrayRef(options.normalized_shape()) << ", eps=" << options.eps()
      << ", elementwise_affine=" << bool_str(options.elementwise_affine()) << ")";
}

RMSNormImpl::RMSNormImpl(const RMSNormOptions& o) : Module("gr::nn::RMSNorm"), options(o) { reset(); }

void RMSNormImpl::reset() {
  if (options.elementwise_affine()) weight = register_parameter("weight", gr::empty(IntArrayRef(options.normalized_shape())));
  reset_parameters();
}

void RMSNormImpl::reset_parameters() {
  if (options.elementwise_affine()) init::ones_(weight);
}

Tensor RMSNormImpl::forward(const Tensor& input) {
  return gr::rms_norm(input, options.normalized_shape(), weight, options.eps());
}

void RMSNormImpl::pretty_print(std::ostream& out) const {
  out << "gr::nn::RMSNorm(" << IntArrayRef(options.normalized_shape()) << ", eps=";
  if (options.eps()) out << *options.eps();
  else out << "None";
  out << ", elementwise_affine=" << bool_str(options.elementwise_affine()) << ")";
}

GroupNormImpl::GroupNormImpl(const GroupNormOptions& o) : Module("gr::nn::GroupNorm"), options(o) { reset(); }

void GroupNormImpl::reset() {
  GR_CHECK(options.num_groups() > 0 && options.num_channels() % options.num_groups() == 0,
           "GroupNorm: num_channels (", options.num_channels(), ") must be divisible by num_groups (",
           options.num_groups(), ")");
  if (options.affine()) {
    weight = register_parameter("weight", empty({options.num_channels()}));
    bias = register_parameter("bias", empty({options.num_channels()}));
  }
  reset_parameters();
}

void GroupNormImpl::reset_parameters() {
  if (!options.affine()) return;
  init::ones_(weight);
  init::zeros_(bias);
}

Tensor GroupNormImpl::forward(const Tensor& input) {
  return gr::group_norm(input, options.num_groups(), weight, bias, options.eps());
}

void GroupNormImpl::pretty_print(std::ostream& out) const {
  out << "gr::nn::GroupNorm(" << options.num_groups() << ", " << options.num_channels() << ", eps=" << options.eps()
      << ", affine=" << bool_str(options.affine()) << ")";
}

InstanceNormImplBase::InstanceNormImplBase(const InstanceNormOptions& o, int64_t spatial_dims, const char* name)
    : Module(name), options(o), spatial_dims_(spatial_dims) {
  reset();
}

void InstanceNormImplBase::reset() {
  const int64_t C = options.num_features();
  GR_CHECK(C > 0, name(), ": num_features must be positive, got ", C);
  if (options.affine()) {
    weight = register_parameter("weight", empty({C}));
    bias = register_parameter("bias", empty({C}));
  }
  if (options.track_running_stats()) {
    running_mean = register_buffer("running_mean", zeros({C}));
    running_var = register_buffer("running_var", ones({C}));
    num_batches_tracked = register_buffer("num_batches_tracked", zeros({}, kInt64));
  }
  reset_parameters();
}

void InstanceNormImplBase::reset_running_stats() {
  if (!options.track_running_stats()) return;
  init::zeros_(running_mean);
  init::ones_(running_var);
  NoGradGuard no_grad;
  num_batches_tracked.fill_(0);
}

void InstanceNormImplBase::reset_parameters() {
  reset_running_stats();
  if (!options.affine()) return;
  init::ones_(weight);
  init::zeros_(bias);
}

Tensor InstanceNormImplBase::forward(const Tensor& input) {
  const int64_t d = input.dim();
  GR_CHECK(d == spatial_dims_ + 1 || d == spatial_dims_ + 2, name(), ": expected ", spatial_dims_ + 1, "D or ",
           spatial_dims_ + 2, "D input (got ", d, "D input of shape ", input.sizes(), ")");
  if (d == spatial_dims_ + 1) return forward(input.unsqueeze(0)).squeeze(0);  // unbatched [C, *]
  return gr::instance_norm(input, weight, bias, running_mean, running_var,
                           is_training() || !options.track_running_stats(), options.momentum(), options.eps());
}

void InstanceNormImplBase::pretty_print(std::ostream& out) const {
  out << name() << "(" << options.num_features() << ", eps=" << options.eps() << ", momentum=" << options.momentum()
      << ", affine=" << bool_str(options.affine())
      << ", track_running_stats=" << bool_str(options.track_running_stats()) << ")";
}

}  // namespace gr::nn
