// PixelShuffle / PixelUnshuffle (libtorch's torch/nn/modules/pixelshuffle.h): sub-pixel
// rearrangement [*, C * r * r, H, W] <-> [*, C, H * r, W * r], no parameters.
#pragma once

#include "nn/functional/pixelshuffle.h"
#include "nn/module.h"
#include "nn/module_holder.h"

namespace gr::nn {

class PixelShuffleImpl : public Module {
 public:
  explicit PixelShuffleImpl(const PixelShuffleOptions& options);
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& out) const override;

  PixelShuffleOptions options;
};
GR_MODULE(PixelShuffle);

class PixelUnshuffleImpl : public Module {
 public:
  explicit PixelUnshuffleImpl(const PixelUnshuffleOptions& options);
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& out) const override;

  PixelUnshuffleOptions options;
};
GR_MODULE(PixelUnshuffle);

}  // namespace gr::nn
