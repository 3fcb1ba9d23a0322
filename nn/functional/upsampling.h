// gr::nn::functional's interpolation (libtorch's torch/nn/functional/upsampling.h):
//   F::interpolate(x, F::InterpolateFuncOptions().scale_factor({2, 2}).mode(gr::kBilinear).align_corners(false))
// over the trailing 1, 2 or 3 dims of a 3-D, 4-D or 5-D input [N, C, ...].
#pragma once

#include <optional>
#include <variant>
#include <vector>

#include "autograd/ops.h"
#include "nn/enum.h"
#include "nn/options.h"

namespace gr::nn::functional {

struct InterpolateFuncOptions {
  // kLinear needs a 3-D input, kBilinear 4-D, kTrilinear 5-D; kArea (4-D) is adaptive_avg_pool2d.
  using mode_t = std::variant<enumtype::kNearest, enumtype::kLinear, enumtype::kBilinear, enumtype::kTrilinear,
                              enumtype::kArea, enumtype::kNearestExact>;
  // Exactly one of size and scale_factor, one value per interpolated dim.
  GR_ARG(std::optional<std::vector<int64_t>>, size) = std::nullopt;
  GR_ARG(std::optional<std::vector<double>>, scale_factor) = std::nullopt;
  GR_ARG(mode_t, mode) = enumtype::kNearest{};
  // Only for the linear modes; unset means false.
  GR_ARG(std::optional<bool>, align_corners) = std::nullopt;
  // true: compute the output size from scale_factor, then interpolate as if that size were given.
  GR_ARG(std::optional<bool>, recompute_scale_factor) = std::nullopt;
  GR_ARG(bool, antialias) = false;  // not supported: true is refused
};

// libtorch's get_enum_name for the interpolation modes: "kNearest", "kBilinear", ...
const char* interpolate_mode_name(const InterpolateFuncOptions::mode_t& mode);

namespace detail {
Tensor interpolate(const Tensor& input, const std::optional<std::vector<int64_t>>& size,
                   const std::optional<std::vector<double>>& scale_factor, InterpolateFuncOptions::mode_t mode,
                   std::optional<bool> align_corners, std::optional<bool> recompute_scale_factor, bool antialias);
}  // namespace detail

inline Tensor interpolate(const Tensor& input, const InterpolateFuncOptions& options = {}) {
  return detail::interpolate(input, options.size(), options.scale_factor(), options.mode(), options.align_corners(),
                             options.recompute_scale_factor(), options.antialias());
}

}  // namespace gr::nn::functional
