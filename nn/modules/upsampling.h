// Upsample (libtorch's torch/nn/modules/upsampling.h): F::interpolate with fixed options.
#pragma once

#include <optional>
#include <ostream>
#include <variant>
#include <vector>

#include "nn/functional/upsampling.h"
#include "nn/module.h"
#include "nn/module_holder.h"

namespace gr::nn {

struct UpsampleOptions {
  using mode_t = std::variant<enumtype::kNearest, enumtype::kLinear, enumtype::kBilinear, enumtype::kTrilinear>;
  GR_ARG(std::optional<std::vector<int64_t>>, size) = std::nullopt;
  GR_ARG(std::optional<std::vector<double>>, scale_factor) = std::nullopt;
  GR_ARG(mode_t, mode) = enumtype::kNearest{};
  GR_ARG(std::optional<bool>, align_corners) = std::nullopt;
};

class UpsampleImpl : public Module {
 public:
  explicit UpsampleImpl(const UpsampleOptions& options = {}) : Module("gr::nn::Upsample"), options(options) {}
  Tensor forward(const Tensor& input);
  // gr::nn::Upsample(scale_factor=[2, 2], mode=kBilinear) or (size=[4, 6], mode=kNearest).
  void pretty_print(std::ostream& out) const override;
  UpsampleOptions options;
};
GR_MODULE(Upsample);

}  // namespace gr::nn
