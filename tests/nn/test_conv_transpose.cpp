// Conv1d, ConvTranspose1d, ConvTranspose2d, PixelShuffle and PixelUnshuffle modules: parameter
// names and shapes, PyTorch's init bounds, forward against the functionals, output_size,
// printing as libtorch, option errors, and use inside Sequential.
#include <cmath>
#include <sstream>

#include "test_util.h"

using namespace gr;
namespace F = gr::nn::functional;

namespace {

template <class M>
std::string printed(const M& m) {
  std::ostringstream out;
  out << *m;
  return out.str();
}

// Every value within +-bound, and the values fill that range (the bound is the one used).
void check_uniform_bound(const Tensor& t, double bound) {
  CHECK(t.abs().max().item<double>() <= bound);
  CHECK(t.abs().max().item<double>() > 0.8 * bound);
}

}  // namespace

TEST_CASE("Conv1d: parameters, init, forward as F::conv1d, printing") {
  manual_seed(0);
  nn::Conv1d conv(nn::Conv1dOptions(4, 6, 3).stride(2).padding(1).groups(2));
  CHECK(conv->named_parameters().keys() == std::vector<std::string>{"weight", "bias"});
  CHECK(conv->weight.sizes() == IntArrayRef({6, 2, 3}));
  check_uniform_bound(conv->weight, 1.0 / std::sqrt(2.0 * 3.0));
  check_uniform_bound(conv->bias, 1.0 / std::sqrt(2.0 * 3.0));
  Tensor x = randn({2, 4, 9});
  Tensor y = conv(x);
  CHECK(y.sizes() == IntArrayRef({2, 6, 5}));
  CHECK(gr::equal(y, F::conv1d(x, conv->weight, F::Conv1dFuncOptions().bias(conv->bias).stride(2).padding(1).groups(2))));
  CHECK(printed(conv) == "gr::nn::Conv1d(4, 6, kernel_size=[3], stride=[2], padding=[1], groups=2)");
  CHECK(printed(nn::Conv1d(nn::Conv1dOptions(2, 3, 5).dilation(2).bias(false))) ==
        "gr::nn::Conv1d(2, 3, kernel_size=[5], stride=[1], dilation=[2], bias=false)");
  CHECK_FALSE(nn::Conv1d(nn::Conv1dOptions(2, 3, 5).bias(false))->bias.defined());
  CHECK_THROWS_WITH_AS(nn::Conv1d(nn::Conv1dOptions(3, 4, 3).groups(2)), doctest::Contains("Conv1d: in_channels (3)"),
                       gr::Error);
  CHECK_THROWS_WITH_AS(conv(randn({2, 2, 9})), doctest::Contains("conv1d: input [2, 2, 9] has 2 channels"), gr::Error);
}

TEST_CASE("ConvTranspose2d: transposed weight [in, out / groups, kH, kW], init from its fan_in, forward") {
  manual_seed(1);
  nn::ConvTranspose2d deconv(nn::ConvTranspose2dOptions(16, 4, 3).stride(2).padding(1).output_padding(1).groups(2));
  CHECK(deconv->named_parameters().keys() == std::vector<std::string>{"weight", "bias"});
  CHECK(deconv->weight.sizes() == IntArrayRef({16, 2, 3, 3}));
  CHECK(deconv->bias.sizes() == IntArrayRef({4}));
  // PyTorch's fan_in of a transposed weight is weight.size(1) * kH * kW = 2 * 9, not 16 * 9.
  check_uniform_bound(deconv->weight, 1.0 / std::sqrt(18.0));
  check_uniform_bound(deconv->bias, 1.0 / std::sqrt(18.0));
  Tensor x = randn({2, 16, 5, 6});
  Tensor y = deconv(x);
  CHECK(y.sizes() == IntArrayRef({2, 4, 10, 12}));
  auto o = F::ConvTranspose2dFuncOptions().bias(deconv->bias).stride(2).padding(1).output_padding(1).groups(2);
  CHECK(gr::equal(y, F::conv_transpose2d(x, deconv->weight, o)));
  CHECK(printed(deconv) ==
        "gr::nn::ConvTranspose2d(16, 4, kernel_size=[3, 3], stride=[2, 2], padding=[1, 1], output_padding=[1, 1], "
        "groups=2)");
  CHECK(printed(nn::ConvTranspose2d(nn::ConvTranspose2dOptions(8, 3, {4, 2}).bias(false))) ==
        "gr::nn::ConvTranspose2d(8, 3, kernel_size=[4, 2], stride=[1, 1], bias=false)");
  CHECK_THROWS_WITH_AS(nn::ConvTranspose2d(nn::ConvTranspose2dOptions(4, 3, 3).groups(2)),
                       doctest::Contains("ConvTranspose2d: in_channels (4) and out_channels (3)"), gr::Error);
  // Wrong in_channels at forward, and output_padding not below the stride.
  CHECK_THROWS_WITH_AS(deconv(randn({2, 8, 5, 6})), doctest::Contains("conv_transpose2d: input [2, 8, 5, 6] has 8"),
                       gr::Error);
  CHECK_THROWS_WITH_AS(nn::ConvTranspose2d(nn::ConvTranspose2dOptions(2, 2, 3).output_padding(1))(randn({1, 2, 4, 4})),
                       doctest::Contains("output_padding must be smaller than either stride or dilation"), gr::Error);
  // The gradient reaches both parameters.
  y.sum().backward();
  CHECK(deconv->weight.grad().defined());
  CHECK(deconv->bias.grad().sizes() == IntArrayRef({4}));
}

TEST_CASE("ConvTranspose2d forward(input, output_size) picks the output_padding, as libtorch") {
  manual_seed(2);
  nn::ConvTranspose2d deconv(nn::ConvTranspose2dOptions(3, 2, 3).stride(2).padding(1));
  Tensor x = randn({1, 3, 4, 4});
  CHECK(deconv(x).sizes() == IntArrayRef({1, 2, 7, 7}));
  Tensor y = deconv(x, IntArrayRef({8, 7}));
  CHECK(y.sizes() == IntArrayRef({1, 2, 8, 7}));
  CHECK(gr::equal(y, F::conv_transpose2d(x, deconv->weight, F::ConvTranspose2dFuncOptions()
                                                                .bias(deconv->bias)
                                                                .stride(2)
                                                                .padding(1)
                                                                .output_padding({1, 0}))));
  CHECK(deconv->forward(x, IntArrayRef({1, 2, 8, 8})).sizes() == IntArrayRef({1, 2, 8, 8}));  // N, C given too
  CHECK_THROWS_WITH_AS(deconv(x, IntArrayRef({9, 7})),
                       doctest::Contains("requested an output size of [9, 7], but valid sizes range from [7, 7] to [8, 8]"),
                       gr::Error);
  CHECK_THROWS_WITH_AS(deconv(x, IntArrayRef({7, 7, 7})), doctest::Contains("output_size must have 2 or 4 elements"),
                       gr::Error);
}

TEST_CASE("ConvTranspose1d: shapes, output_size, printing") {
  manual_seed(3);
  nn::ConvTranspose1d deconv(nn::ConvTranspose1dOptions(4, 6, 5).stride(3).dilation(2));
  CHECK(deconv->weight.sizes() == IntArrayRef({4, 6, 5}));
  check_uniform_bound(deconv->weight, 1.0 / std::sqrt(30.0));
  Tensor x = randn({2, 4, 7});
  // (7 - 1) * 3 + 2 * 4 + 1 = 27
  CHECK(deconv(x).sizes() == IntArrayRef({2, 6, 27}));
  CHECK(deconv(x, IntArrayRef({29})).sizes() == IntArrayRef({2, 6, 29}));
  CHECK(gr::equal(deconv(x), F::conv_transpose1d(x, deconv->weight,
                                                 F::ConvTranspose1dFuncOptions().bias(deconv->bias).stride(3).dilation(2))));
  CHECK(printed(deconv) == "gr::nn::ConvTranspose1d(4, 6, kernel_size=[5], stride=[3], dilation=[2])");
}

TEST_CASE("PixelShuffle and PixelUnshuffle modules") {
  nn::PixelShuffle shuffle(2);
  nn::PixelUnshuffle unshuffle(nn::PixelUnshuffleOptions(2));
  CHECK(shuffle->parameters().empty());
  Tensor x = randn({2, 12, 3, 5});
  Tensor y = shuffle(x);
  CHECK(y.sizes() == IntArrayRef({2, 3, 6, 10}));
  CHECK(gr::equal(y, F::pixel_shuffle(x, 2)));
  CHECK(gr::equal(unshuffle(y), x));
  CHECK(gr::equal(F::pixel_unshuffle(y, F::PixelUnshuffleFuncOptions(2)), x));
  CHECK(printed(shuffle) == "gr::nn::PixelShuffle(upscale_factor=2)");
  CHECK(printed(unshuffle) == "gr::nn::PixelUnshuffle(downscale_factor=2)");
}

TEST_CASE("a DCGAN-style generator in Sequential: noise [N, z, 1, 1] to [N, 1, 28, 28], trainable") {
  manual_seed(4);
  nn::Sequential g(nn::ConvTranspose2d(nn::ConvTranspose2dOptions(8, 16, 4).bias(false)), nn::BatchNorm2d(16),
                   nn::ReLU(), nn::ConvTranspose2d(nn::ConvTranspose2dOptions(16, 8, 3).stride(2).padding(1).bias(false)),
                   nn::BatchNorm2d(8), nn::ReLU(),
                   nn::ConvTranspose2d(nn::ConvTranspose2dOptions(8, 4, 4).stride(2).padding(1).bias(false)),
                   nn::BatchNorm2d(4), nn::ReLU(),
                   nn::ConvTranspose2d(nn::ConvTranspose2dOptions(4, 1, 4).stride(2).padding(1).bias(false)), nn::Tanh());
  Tensor y = g(randn({3, 8, 1, 1}));
  CHECK(y.sizes() == IntArrayRef({3, 1, 28, 28}));
  CHECK(y.abs().max().item<double>() <= 1.0);
  y.pow(2).mean().backward();
  for (const auto& p : g->named_parameters()) {
    CAPTURE(p.key());
    CHECK(p.value().grad().defined());
  }
  CHECK(g->named_parameters().keys().front() == "0.weight");
  CHECK(printed(g).find("(9): gr::nn::ConvTranspose2d(4, 1, kernel_size=[4, 4], stride=[2, 2], padding=[1, 1], "
                        "bias=false)") != std::string::npos);
}
