// PixelShuffle's options and gr::nn::functional's pixel_shuffle / pixel_unshuffle (libtorch's
// torch/nn/options/pixelshuffle.h and functional/pixelshuffle.h): F::pixel_shuffle(x, 2).
#pragma once

#include "autograd/ops.h"
#include "core/arg.h"

namespace gr::nn {

struct PixelShuffleOptions {
  PixelShuffleOptions(int64_t upscale_factor) : upscale_factor_(upscale_factor) {}
  GR_ARG(int64_t, upscale_factor);
};

struct PixelUnshuffleOptions {
  PixelUnshuffleOptions(int64_t downscale_factor) : downscale_factor_(downscale_factor) {}
  GR_ARG(int64_t, downscale_factor);
};

namespace functional {

using PixelShuffleFuncOptions = PixelShuffleOptions;
using PixelUnshuffleFuncOptions = PixelUnshuffleOptions;

inline Tensor pixel_shuffle(const Tensor& input, const PixelShuffleFuncOptions& o) {
  return gr::pixel_shuffle(input, o.upscale_factor());
}
inline Tensor pixel_unshuffle(const Tensor& input, const PixelUnshuffleFuncOptions& o) {
  return gr::pixel_unshuffle(input, o.downscale_factor());
}

}  // namespace functional
}  // namespace gr::nn
