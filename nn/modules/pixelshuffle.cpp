// PixelShuffle and PixelUnshuffle layers.
#include "nn/modules/pixelshuffle.h"

#include <ostream>

namespace gr::nn {

PixelShuffleImpl::PixelShuffleImpl(const PixelShuffleOptions& o) : Module("gr::nn::PixelShuffle"), options(o) {}
Tensor PixelShuffleImpl::forward(const Tensor& input) { return functional::pixel_shuffle(input, options); }
void PixelShuffleImpl::pretty_print(std::ostream& out) const {
  out << "gr::nn::PixelShuffle(upscale_factor=" << options.upscale_factor() << ")";
}

PixelUnshuffleImpl::PixelUnshuffleImpl(const PixelUnshuffleOptions& o)
    : Module("gr::nn::PixelUnshuffle"), options(o) {}
Tensor PixelUnshuffleImpl::forward(const Tensor& input) { return functional::pixel_unshuffle(input, options); }
void PixelUnshuffleImpl::pretty_print(std::ostream& out) const {
  out << "gr::nn::PixelUnshuffle(downscale_factor=" << options.downscale_factor() << ")";
}

}  // namespace gr::nn
