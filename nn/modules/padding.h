// The padding layers of libtorch (torch/nn/modules/padding.h): ReflectionPad{1,2,3}d,
// ReplicationPad{1,2,3}d, ZeroPad{1,2,3}d and ConstantPad{1,2,3}d, each F::pad with a fixed
// mode over the last D dims. padding: one value for every side, or 2 * D values
// (left, right[, top, bottom[, front, back]]).
#pragma once

#include <ostream>

#include "nn/functional/padding.h"
#include "nn/module.h"
#include "nn/module_holder.h"
#include "nn/options.h"

namespace gr::nn {

template <size_t D>
struct PadOptions {
  PadOptions(ExpandingArray<D * 2> padding) : padding_(padding) {}
  GR_ARG(ExpandingArray<D * 2>, padding);
};
template <size_t D>
using ReflectionPadOptions = PadOptions<D>;
template <size_t D>
using ReplicationPadOptions = PadOptions<D>;
template <size_t D>
using ZeroPadOptions = PadOptions<D>;
template <size_t D>
struct ConstantPadOptions {
  ConstantPadOptions(ExpandingArray<D * 2> padding, double value) : padding_(padding), value_(value) {}
  GR_ARG(ExpandingArray<D * 2>, padding);
  GR_ARG(double, value);
};

namespace detail {
// One padding layer: Mode's F::pad over the last D dims; `Kind` names it ("ReflectionPad").
template <size_t D, class Mode, class Options = PadOptions<D>>
class PadImpl : public Module {
 public:
  PadImpl(const char* kind, const Options& options)
      : Module(std::string("gr::nn::") + kind + std::to_string(D) + "d"), options(options) {}
  Tensor forward(const Tensor& input) {
    double value = 0;
    if constexpr (std::is_same_v<Options, ConstantPadOptions<D>>) value = options.value();
    return functional::detail::pad(input, options.padding(), Mode{}, value);
  }
  void pretty_print(std::ostream& out) const override {
    out << name() << "(padding=" << options.padding();
    if constexpr (std::is_same_v<Options, ConstantPadOptions<D>>) out << ", value=" << options.value();
    out << ")";
  }
  Options options;
};
}  // namespace detail

#define GR_PAD_MODULE(Kind, D, Mode, Options)                                                            \
  using Kind##D##dOptions = Options<D>;                                                                  \
  class Kind##D##dImpl : public detail::PadImpl<D, enumtype::Mode, Options<D>> {                         \
   public:                                                                                               \
    explicit Kind##D##dImpl(const Kind##D##dOptions& options)                                            \
        : detail::PadImpl<D, enumtype::Mode, Options<D>>(#Kind, options) {}                              \
    GR_PAD_MODULE_EXTRA_##Options(Kind, D)                                                               \
  };                                                                                                     \
  GR_MODULE(Kind##D##d)
// Constructors from the padding alone (and the value, for ConstantPad), as libtorch's.
#define GR_PAD_MODULE_EXTRA_PadOptions(Kind, D) \
  explicit Kind##D##dImpl(ExpandingArray<D * 2> padding) : Kind##D##dImpl(Kind##D##dOptions(padding)) {}
#define GR_PAD_MODULE_EXTRA_ConstantPadOptions(Kind, D) \
  Kind##D##dImpl(ExpandingArray<D * 2> padding, double value) : Kind##D##dImpl(Kind##D##dOptions(padding, value)) {}

#define GR_PAD_MODULES(Kind, Mode, Options) \
  GR_PAD_MODULE(Kind, 1, Mode, Options);   \
  GR_PAD_MODULE(Kind, 2, Mode, Options);   \
  GR_PAD_MODULE(Kind, 3, Mode, Options)

GR_PAD_MODULES(ReflectionPad, kReflect, PadOptions);
GR_PAD_MODULES(ReplicationPad, kReplicate, PadOptions);
GR_PAD_MODULES(ZeroPad, kConstant, PadOptions);
GR_PAD_MODULES(ConstantPad, kConstant, ConstantPadOptions);

#undef GR_PAD_MODULES
#undef GR_PAD_MODULE_EXTRA_ConstantPadOptions
#undef GR_PAD_MODULE_EXTRA_PadOptions
#undef GR_PAD_MODULE

}  // namespace gr::nn
