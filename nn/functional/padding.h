// gr::nn::functional's padding (libtorch's torch/nn/functional/padding.h):
//   F::pad(x, F::PadFuncOptions({1, 2}).mode(gr::kReflect))
// pad lists (left, right) pairs from the last dim backwards.
#pragma once

#include <variant>
#include <vector>

#include "autograd/ops.h"
#include "nn/enum.h"
#include "nn/options.h"

namespace gr::nn::functional {

struct PadFuncOptions {
  using mode_t = std::variant<enumtype::kConstant, enumtype::kReflect, enumtype::kReplicate, enumtype::kCircular>;
  PadFuncOptions(std::vector<int64_t> pad) : pad_(std::move(pad)) {}
  GR_ARG(std::vector<int64_t>, pad);
  GR_ARG(mode_t, mode) = enumtype::kConstant{};
  GR_ARG(double, value) = 0;
};

namespace detail {
inline Tensor pad(const Tensor& input, IntArrayRef pad, PadFuncOptions::mode_t mode, double value) {
  static constexpr const char* names[] = {"constant", "reflect", "replicate", "circular"};
  const char* name = names[mode.index()];
  return gr::pad(input, pad, name, mode.index() == 0 ? std::optional<double>(value) : std::nullopt);
}
}  // namespace detail

inline Tensor pad(const Tensor& input, const PadFuncOptions& options) {
  return detail::pad(input, options.pad(), options.mode(), options.value());
}

}  // namespace gr::nn::functional
