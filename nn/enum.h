// libtorch's enum tags (torch/enum.h): gr::kReLU, gr::kFanIn, ... each its own empty type,
// so that an option can accept exactly the tags that make sense for it (nn::init's
// NonlinearityType and FanModeType, KLDivLoss's reduction, activations by name, padding and
// interpolation modes).
#pragma once

namespace gr {
namespace enumtype {
#define GR_ENUM_TAG(name) \
  struct name {};
GR_ENUM_TAG(kLinear)
GR_ENUM_TAG(kConv1D)
GR_ENUM_TAG(kConv2D)
GR_ENUM_TAG(kConv3D)
GR_ENUM_TAG(kConvTranspose1D)
GR_ENUM_TAG(kConvTranspose2D)
GR_ENUM_TAG(kConvTranspose3D)
GR_ENUM_TAG(kSigmoid)
GR_ENUM_TAG(kTanh)
GR_ENUM_TAG(kReLU)
GR_ENUM_TAG(kGELU)
GR_ENUM_TAG(kLeakyReLU)
GR_ENUM_TAG(kSELU)
GR_ENUM_TAG(kFanIn)
GR_ENUM_TAG(kFanOut)
GR_ENUM_TAG(kBatchMean)
GR_ENUM_TAG(kConstant)
GR_ENUM_TAG(kReflect)
GR_ENUM_TAG(kReplicate)
GR_ENUM_TAG(kCircular)
GR_ENUM_TAG(kNearest)
GR_ENUM_TAG(kBilinear)
GR_ENUM_TAG(kTrilinear)
GR_ENUM_TAG(kArea)
GR_ENUM_TAG(kNearestExact)
#undef GR_ENUM_TAG
}  // namespace enumtype

inline constexpr enumtype::kLinear kLinear{};
inline constexpr enumtype::kConv1D kConv1D{};
inline constexpr enumtype::kConv2D kConv2D{};
inline constexpr enumtype::kConv3D kConv3D{};
inline constexpr enumtype::kConvTranspose1D kConvTranspose1D{};
inline constexpr enumtype::kConvTranspose2D kConvTranspose2D{};
inline constexpr enumtype::kConvTranspose3D kConvTranspose3D{};
inline constexpr enumtype::kSigmoid kSigmoid{};
inline constexpr enumtype::kTanh kTanh{};
inline constexpr enumtype::kReLU kReLU{};
inline constexpr enumtype::kGELU kGELU{};
inline constexpr enumtype::kLeakyReLU kLeakyReLU{};
inline constexpr enumtype::kSELU kSELU{};
inline constexpr enumtype::kFanIn kFanIn{};
inline constexpr enumtype::kFanOut kFanOut{};
// KLDivLoss's extra reduction: the sum divided by the batch size (input.size(0)).
inline constexpr enumtype::kBatchMean kBatchMean{};
// Padding modes (F::pad) and interpolation modes (F::interpolate, Upsample; kLinear above).
inline constexpr enumtype::kConstant kConstant{};
inline constexpr enumtype::kReflect kReflect{};
inline constexpr enumtype::kReplicate kReplicate{};
inline constexpr enumtype::kCircular kCircular{};
inline constexpr enumtype::kNearest kNearest{};
inline constexpr enumtype::kBilinear kBilinear{};
inline constexpr enumtype::kTrilinear kTrilinear{};
inline constexpr enumtype::kArea kArea{};
inline constexpr enumtype::kNearestExact kNearestExact{};

}  // namespace gr
