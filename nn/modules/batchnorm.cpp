// BatchNorm1d/2d/3d layers.
#include "nn/modules/batchnorm.h"

#include <string>

#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "core/factory.h"
#include "core/native/copy/copy.h"
#include "core/native/elementwise/elementwise.h"
#include "nn/init.h"

namespace gr::nn {

BatchNorm2dImpl::BatchNorm2dImpl(const BatchNorm2dOptions& o) : BatchNorm2dImpl(o, "gr::nn::BatchNorm2d", 4, 4) {}

BatchNorm2dImpl::BatchNorm2dImpl(const BatchNorm2dOptions& o, const char* name, int64_t min_dim, int64_t max_dim)
    : Module(name), options(o), min_dim_(min_dim), max_dim_(max_dim) {
  GR_CHECK(o.num_features() > 0, this->name(), ": num_features must be positive, got ", o.num_features());
  if (o.affine()) {
    weight = register_parameter("weight", empty({o.num_features()}));
    bias = register_parameter("bias", empty({o.num_features()}));
  }
  if (o.track_running_stats()) {
    running_mean = register_buffer("running_mean", zeros({o.num_features()}));
    running_var = register_buffer("running_var", ones({o.num_features()}));
    num_batches_tracked = register_buffer("num_batches_tracked", zeros({}, kInt64));
  }
  reset_parameters();
}

void BatchNorm2dImpl::reset_running_stats() {
  if (!options.track_running_stats()) return;
  init::zeros_(running_mean);
  init::ones_(running_var);
  NoGradGuard no_grad;
  native::fill_(num_batches_tracked, 0);
}

void BatchNorm2dImpl::reset_parameters() {
  reset_running_stats();
  if (options.affine()) {
    init::ones_(weight);
    init::zeros_(bias);
  }
}

Tensor BatchNorm2dImpl::forward(const Tensor& x) {
  GR_CHECK(x.dim() >= min_dim_ && x.dim() <= max_dim_, name(), ": expected ", min_dim_, "D",
           max_dim_ > min_dim_ ? " or " + std::to_string(max_dim_) + "D" : std::string(), " input (got ", x.dim(),
           "D input)");
  GR_CHECK(x.size(1) == options.num_features(), name(), ": expected ", options.num_features(),
           " channels, got input of shape ", x.sizes());
  double momentum = options.momentum().value_or(0.0);
  if (is_training() && options.track_running_stats()) {
    NoGradGuard no_grad;
    native::add_(num_batches_tracked, native::wrapped_scalar(num_batches_tracked, 1));
    if (!options.momentum()) momentum = 1.0 / static_cast<double>(num_batches_tracked.item<int64_t>());
  }
  // Batch statistics in training, or when no running statistics are kept.
  bool use_batch_stats = is_training() || !options.track_running_stats();
  if (backend_ && is_training()) return backend_->forward(*this, x, momentum);
  return gr::batch_norm(x, weight, bias, running_mean, running_var, use_batch_stats, momentum, options.eps());
}

void BatchNorm2dImpl::pretty_print(std::ostream& out) const {
  out << (backend_ ? backend_->name() : name()) << "(" << options.num_features() << ", eps=" << options.eps() << ", momentum=";
  if (options.momentum()) out << *options.momentum();
  else out << "None";
  out << ", affine=" << (options.affine() ? "true" : "false")
      << ", track_running_stats=" << (options.track_running_stats() ? "true" : "false") << ")";
}

}  // namespace gr::nn
