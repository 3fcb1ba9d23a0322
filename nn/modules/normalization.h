// Normalisation layers over trailing dims, channel groups or instances: LayerNorm, RMSNorm,
// GroupNorm (libtorch's torch/nn/modules/normalization.h) and InstanceNorm1d/2d/3d (libtorch's
// instancenorm.h).
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "nn/module.h"
#include "nn/module_holder.h"
#include "nn/options.h"

namespace gr::nn {

struct LayerNormOptions {
  LayerNormOptions(std::vector<int64_t> normalized_shape) : normalized_shape_(std::move(normalized_shape)) {}
  GR_ARG(std::vector<int64_t>, normalized_shape);
  GR_ARG(double, eps) = 1e-5;
  GR_ARG(bool, elementwise_affine) = true;
};

// Normalises over the trailing normalized_shape dims; weight (ones) and bias (zeros) of that
// shape when elementwise_affine.
class LayerNormImpl : public Module {
 public:
  LayerNormImpl(std::vector<int64_t> normalized_shape) : LayerNormImpl(LayerNormOptions(std::move(normalized_shape))) {}
  explicit LayerNormImpl(const LayerNormOptions& options);
  void reset();
  void reset_parameters();
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& out) const override;

  LayerNormOptions options;
  Tensor weight, bias;
};
GR_MODULE(LayerNorm);

struct RMSNormOptions {
  RMSNormOptions(std::vector<int64_t> normalized_shape) : normalized_shape_(std::move(normalized_shape)) {}
  GR_ARG(std::vector<int64_t>, normalized_shape);
  GR_ARG(std::optional<double>, eps) = std::nullopt;  // nullopt: the input dtype's machine epsilon
  GR_ARG(bool, elementwise_affine) = true;
};

// x / sqrt(mean(x^2) + eps) over the trailing dims, times weight (ones) when elementwise_affine.
class RMSNormImpl : public Module {
 public:
  RMSNormImpl(std::vector<int64_t> normalized_shape) : RMSNormImpl(RMSNormOptions(std::move(normalized_shape))) {}
  explicit RMSNormImpl(const RMSNormOptions& options);
  void reset();
  void reset_parameters();
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& out) const override;

  RMSNormOptions options;
  Tensor weight;
};
GR_MODULE(RMSNorm);

struct GroupNormOptions {
  GroupNormOptions(int64_t num_groups, int64_t num_channels) : num_groups_(num_groups), num_channels_(num_channels) {}
  GR_ARG(int64_t, num_groups);
  GR_ARG(int64_t, num_channels);
  GR_ARG(double, eps) = 1e-5;
  GR_ARG(bool, affine) = true;
};

// Normalises each group of num_channels / num_groups channels of [N, C, *]; per-channel
// weight (ones) and bias (zeros) when affine.
class GroupNormImpl : public Module {
 public:
  GroupNormImpl(int64_t num_groups, int64_t num_channels) : GroupNormImpl(GroupNormOptions(num_groups, num_channels)) {}
  explicit GroupNormImpl(const GroupNormOptions& options);
  void reset();
  void reset_parameters();
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& out) const override;

  GroupNormOptions options;
  Tensor weight, bias;
};
GR_MODULE(GroupNorm);

struct InstanceNormOptions {
  InstanceNormOptions(int64_t num_features) : num_features_(num_features) {}
  GR_ARG(int64_t, num_features);
  GR_ARG(double, eps) = 1e-5;
  GR_ARG(double, momentum) = 0.1;
  GR_ARG(bool, affine) = false;
  GR_ARG(bool, track_running_stats) = false;
};
using InstanceNorm1dOptions = InstanceNormOptions;
using InstanceNorm2dOptions = InstanceNormOptions;
using InstanceNorm3dOptions = InstanceNormOptions;

// Normalises each (n, c) instance over its D spatial dims: input [N, C, *D] or unbatched
// [C, *D]. Running statistics (track_running_stats) are used in eval mode.
class InstanceNormImplBase : public Module {
 public:
  InstanceNormImplBase(const InstanceNormOptions& options, int64_t spatial_dims, const char* name);
  void reset();
  void reset_running_stats();
  void reset_parameters();
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& out) const override;

  InstanceNormOptions options;
  Tensor weight, bias;                                    // affine only
  Tensor running_mean, running_var, num_batches_tracked;  // track_running_stats only

 private:
  int64_t spatial_dims_;
};

#define GR_INSTANCE_NORM_MODULE(Name, D)                                                             \
  class Name##Impl : public InstanceNormImplBase {                                                   \
   public:                                                                                           \
    explicit Name##Impl(int64_t num_features) : Name##Impl(InstanceNormOptions(num_features)) {}     \
    explicit Name##Impl(const InstanceNormOptions& options) : InstanceNormImplBase(options, D, "gr::nn::" #Name) {} \
  };                                                                                                 \
  GR_MODULE(Name)
GR_INSTANCE_NORM_MODULE(InstanceNorm1d, 1);
GR_INSTANCE_NORM_MODULE(InstanceNorm2d, 2);
GR_INSTANCE_NORM_MODULE(InstanceNorm3d, 3);
#undef GR_INSTANCE_NORM_MODULE

}  // namespace gr::nn
