// F::interpolate: libtorch's argument rules (size or scale_factor, align_corners only for the
// linear modes, the input's rank picks the op), then the upsample_* ops of autograd/ops.h.
#include "nn/functional/upsampling.h"

#include <cmath>

namespace gr::nn::functional {

const char* interpolate_mode_name(const InterpolateFuncOptions::mode_t& mode) {
  static constexpr const char* names[] = {"kNearest", "kLinear", "kBilinear", "kTrilinear", "kArea", "kNearestExact"};
  return names[mode.index()];
}

namespace detail {

namespace {
// libtorch's _interp_output_size: the given size, or floor(input size * scale factor).
std::vector<int64_t> output_size(const Tensor& input, int64_t dims, const std::optional<std::vector<int64_t>>& size,
                                 const std::optional<std::vector<double>>& scale_factor) {
  GR_CHECK(size.has_value() || scale_factor.has_value(), "interpolate: either size or scale_factor should be defined");
  GR_CHECK(!(size.has_value() && scale_factor.has_value()),
           "interpolate: only one of size or scale_factor should be defined");
  if (size) {
    GR_CHECK(static_cast<int64_t>(size->size()) == dims, "interpolate: size shape must match input shape. Input is ",
             dims, "D, size is ", IntArrayRef(*size));
    return *size;
  }
  GR_CHECK(static_cast<int64_t>(scale_factor->size()) == dims,
           "interpolate: scale_factor shape must match input shape. Input is ", dims, "D, scale_factor has ",
           scale_factor->size(), " values");
  std::vector<int64_t> out;
  for (int64_t i = 0; i < dims; ++i)
    out.push_back(static_cast<int64_t>(std::floor(static_cast<double>(input.size(i + 2)) * (*scale_factor)[i])));
  return out;
}
}  // namespace

Tensor interpolate(const Tensor& input, const std::optional<std::vector<int64_t>>& size,
                   const std::optional<std::vector<double>>& scale_factor, InterpolateFuncOptions::mode_t mode,
                   std::optional<bool> align_corners, std::optional<bool> recompute_scale_factor, bool antialias) {
  const bool linear = std::holds_alternative<enumtype::kLinear>(mode) ||
                      std::holds_alternative<enumtype::kBilinear>(mode) ||
                      std::holds_alternative<enumtype::kTrilinear>(mode);
  GR_CHECK(linear || !align_corners.has_value(),
           "interpolate: align_corners option can only be set with the interpolating modes: linear | bilinear | ",
           "trilinear (got ", interpolate_mode_name(mode), ")");
  GR_CHECK(!antialias, "interpolate: anti-alias option is not supported");
  GR_CHECK(input.defined(), "interpolate: input is undefined");
  GR_CHECK(input.dim() >= 3 && input.dim() <= 5, "interpolate: only 3D, 4D and 5D input tensors are supported (got ",
           input.dim(), "D) for the modes: nearest | linear | bilinear | trilinear | area | nearest-exact (got ",
           interpolate_mode_name(mode), ")");
  const int64_t dims = input.dim() - 2;
  if (linear) {  // the rank first, as libtorch
    static constexpr const char* needs[] = {"3D", "4D", "5D"};
    const int64_t want = std::holds_alternative<enumtype::kLinear>(mode)     ? 1
                         : std::holds_alternative<enumtype::kBilinear>(mode) ? 2
                                                                             : 3;
    GR_CHECK(dims == want, "interpolate: got ", input.dim(), "D input, but ", interpolate_mode_name(mode),
             " mode needs ", needs[want - 1], " input");
  }
  const std::vector<int64_t> out = output_size(input, dims, size, scale_factor);
  // The user's scale factors reach the op (and replace in/out ratios) unless recomputed.
  std::vector<std::optional<double>> s(dims);
  if (scale_factor && !recompute_scale_factor.value_or(false))
    for (int64_t i = 0; i < dims; ++i) s[i] = (*scale_factor)[i];
  const bool corners = align_corners.value_or(false);
  if (std::holds_alternative<enumtype::kNearest>(mode)) {
    if (dims == 1) return upsample_nearest1d(input, out, s[0]);
    if (dims == 2) return upsample_nearest2d(input, out, s[0], s[1]);
    return upsample_nearest3d(input, out, s[0], s[1], s[2]);
  }
  if (std::holds_alternative<enumtype::kNearestExact>(mode)) {
    if (dims == 1) return _upsample_nearest_exact1d(input, out, s[0]);
    if (dims == 2) return _upsample_nearest_exact2d(input, out, s[0], s[1]);
    return _upsample_nearest_exact3d(input, out, s[0], s[1], s[2]);
  }
  if (std::holds_alternative<enumtype::kArea>(mode)) {
    GR_CHECK(dims == 2, "interpolate: mode kArea is supported for 4D input only here, got ", input.dim(), "D");
    return adaptive_avg_pool2d(input, out);
  }
  if (dims == 1) return upsample_linear1d(input, out, corners, s[0]);
  if (dims == 2) return upsample_bilinear2d(input, out, corners, s[0], s[1]);
  return upsample_trilinear3d(input, out, corners, s[0], s[1], s[2]);
}

}  // namespace detail
}  // namespace gr::nn::functional
