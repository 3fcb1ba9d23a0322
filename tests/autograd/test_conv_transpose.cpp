// conv1d, conv_transpose1d, conv_transpose2d, pixel_shuffle and pixel_unshuffle: outputs and
// gradients against PyTorch (tests/data/conv_reference.json) under every CPU conv algorithm,
// float32 precision, first-order backward without history, and the argument errors.
// (float64 gradcheck and gradgradcheck: op_info_conv.cpp.)
#include "conv_test_util.h"

using namespace gr;
using test::ints;

namespace {

Tensor leaf(const nlohmann::json& j, ScalarType dtype = kFloat64) {
  return test::tensor_from_json(j, dtype).detach().requires_grad_(true);
}

// Runs the reference cases of `key` through f(x, w, b, case) and checks the output and the
// three gradients.
template <class F>
void check_cases(const char* key, F f, ScalarType dtype, double tol) {
  for (const auto& c : test::conv_reference().at(key)) {
    CAPTURE(key);
    CAPTURE(c.at("name").get<std::string>());
    Tensor x = leaf(c.at("input"), dtype), w = leaf(c.at("weight"), dtype);
    Tensor b = c.contains("bias") ? leaf(c.at("bias"), dtype) : Tensor();
    Tensor y = f(x, w, b, c);
    test::check_close(y, test::tensor_from_json(c.at("output")), tol);
    y.backward(test::tensor_from_json(c.at("grad_output"), dtype));
    test::check_close(x.grad(), test::tensor_from_json(c.at("grad_input")), tol);
    test::check_close(w.grad(), test::tensor_from_json(c.at("grad_weight")), tol);
    if (b.defined()) test::check_close(b.grad(), test::tensor_from_json(c.at("grad_bias")), tol);
  }
}

Tensor run_conv1d(const Tensor& x, const Tensor& w, const Tensor& b, const nlohmann::json& c) {
  return conv1d(x, w, b, ints(c.at("stride")), ints(c.at("padding")), ints(c.at("dilation")),
                c.at("groups").get<int64_t>());
}

Tensor run_conv_transpose(const Tensor& x, const Tensor& w, const Tensor& b, const nlohmann::json& c) {
  auto f = x.dim() == 4 ? &gr::conv_transpose2d : &gr::conv_transpose1d;
  return f(x, w, b, ints(c.at("stride")), ints(c.at("padding")), ints(c.at("output_padding")),
           c.at("groups").get<int64_t>(), ints(c.at("dilation")));
}

void check_all(ScalarType dtype, double tol) {
  check_cases("conv1d", run_conv1d, dtype, tol);
  check_cases("conv_transpose1d", run_conv_transpose, dtype, tol);
  check_cases("conv_transpose2d", run_conv_transpose, dtype, tol);
}

template <class F>
void throws(F f, const char* op, const char* text) {
  CHECK_THROWS_WITH_AS(f(), doctest::Contains(text), gr::Error);
  CHECK_THROWS_WITH_AS(f(), doctest::Contains(op), gr::Error);
}

}  // namespace

TEST_CASE("conv1d and the transposed convolutions match PyTorch (float64, every CPU algorithm)") {
  test::for_each_conv_algorithm([] { check_all(kFloat64, 1e-10); });
}

TEST_CASE("conv1d and the transposed convolutions in float32 match PyTorch to float precision") {
  test::for_each_conv_algorithm([] { check_all(kFloat32, 1e-4); });
}

TEST_CASE("pixel_shuffle and pixel_unshuffle match PyTorch and invert each other") {
  for (const auto& c : test::conv_reference().at("pixel_shuffle")) {
    const std::string name = c.at("name").get<std::string>();
    CAPTURE(name);
    Tensor x = leaf(c.at("input"));
    const int64_t r = c.at("factor").get<int64_t>();
    Tensor y = name == "pixel_shuffle" ? pixel_shuffle(x, r) : pixel_unshuffle(x, r);
    test::check_close(y, test::tensor_from_json(c.at("output")), 1e-15);
    y.backward(test::tensor_from_json(c.at("grad_output")));
    test::check_close(x.grad(), test::tensor_from_json(c.at("grad_input")), 1e-15);
    Tensor back = name == "pixel_shuffle" ? pixel_unshuffle(y, r) : pixel_shuffle(y, r);
    CHECK(gr::equal(back, x));
  }
  // Any dtype: a rearrangement, no arithmetic.
  Tensor i = arange(2 * 4 * 2 * 2, TensorOptions(kInt64)).reshape({2, 4, 2, 2});
  CHECK(gr::equal(pixel_unshuffle(pixel_shuffle(i, 2), 2), i));
}

TEST_CASE("conv_transpose2d is the input gradient of conv2d with the same arguments") {
  // <conv_transpose2d(g, w), x> = <g, conv2d(x, w)> for every x, g: the adjoint pair.
  Generator gen(5);
  Tensor x = randn({2, 6, 9, 8}, TensorOptions(kFloat64), &gen), w = randn({4, 3, 3, 2}, TensorOptions(kFloat64), &gen);
  Tensor y = conv2d(x, w, {}, {2, 1}, {1, 0}, {1, 2}, 2);
  Tensor g = randn(y.sizes(), TensorOptions(kFloat64), &gen);
  // Rows (5 - 1) * 2 - 2 * 1 + (3 - 1) + 1 = 9 and columns (6 - 1) * 1 + 2 * (2 - 1) + 1 = 8: no
  // output_padding needed.
  Tensor t = conv_transpose2d(g, w, {}, {2, 1}, {1, 0}, 0, 2, {1, 2});
  REQUIRE(t.sizes() == x.sizes());
  CHECK((t * x).sum().item<double>() == doctest::Approx((g * y).sum().item<double>()).epsilon(1e-12));
}

TEST_CASE("the transposed convolutions' first-order gradients carry no history") {
  Generator gen(6);
  Tensor x = randn({1, 2, 3, 3}, TensorOptions(kFloat64), &gen).requires_grad_(true);
  Tensor w = randn({2, 3, 2, 2}, TensorOptions(kFloat64), &gen).requires_grad_(true);
  Tensor y = conv_transpose2d(x, w, {}, 2);
  CHECK(y.sizes() == IntArrayRef({1, 3, 6, 6}));
  CHECK(y.grad_fn()->name() == "ConvolutionBackward0");
  y.sum().backward();
  CHECK_FALSE(x.grad().requires_grad());
  CHECK_FALSE(w.grad().requires_grad());
  // With create_graph the input gradient is differentiable again (in w).
  Tensor gx = autograd::grad({conv_transpose2d(x, w, {}, 2).pow(2).sum()}, {x}, {}, std::nullopt, true)[0];
  CHECK(gx.requires_grad());
}

TEST_CASE("conv_transpose2d and conv_transpose1d reject bad arguments naming the op and the shapes") {
  Tensor x = randn({2, 4, 5, 5}), w = randn({4, 3, 3, 3});
  const char* op = "conv_transpose2d";
  throws([&] { return conv_transpose2d(randn({4, 5, 5}), w); }, op, "4-D input");
  throws([&] { return conv_transpose2d(x, randn({4, 3, 3})); }, op, "4-D weight [C_in, C_out / groups, kH, kW]");
  // wrong in_channels: the weight's first dim is C_in
  throws([&] { return conv_transpose2d(x, randn({3, 4, 3, 3})); }, op, "[2, 4, 5, 5] has 4 channels, but weight");
  throws([&] { return conv_transpose2d(randn({2, 3, 5, 5}), randn({3, 2, 3, 3}), {}, 1, 0, 0, 2); }, op,
         "groups=2 must divide");
  // output_padding must stay below the stride or the dilation
  throws([&] { return conv_transpose2d(x, w, {}, 2, 0, 2); }, op, "output_padding must be smaller than either stride");
  throws([&] { return conv_transpose2d(x, w, {}, 1, 0, {0, 1}); }, op, "output_padding [0, 1]");
  CHECK_NOTHROW(conv_transpose2d(x, w, {}, 2, 0, 1));
  CHECK_NOTHROW(conv_transpose2d(x, w, {}, 1, 0, 1, 1, 2));  // below the dilation
  throws([&] { return conv_transpose2d(x, w, {}, 1, 0, -1); }, op, "output_padding must be smaller");
  // output too small, bias shape, lists
  throws([&] { return conv_transpose2d(randn({1, 4, 1, 1}), randn({4, 2, 1, 1}), {}, 1, 1); }, op,
         "output size -1x-1 is too small");
  throws([&] { return conv_transpose2d(x, w, randn({4})); }, op, "bias must be 1-D with C_out = 3");
  throws([&] { return conv_transpose2d(x, w, {}, {1, 1, 1}); }, op, "stride must have 1 or 2 values");
  throws([&] { return conv_transpose2d(x, w, {}, 0); }, op, "stride must be positive");
  throws([&] { return conv_transpose2d(x, w.to(kFloat64)); }, op, "same dtype");
  // 1-D: three dims, one-value lists
  op = "conv_transpose1d";
  throws([&] { return conv_transpose1d(x, w); }, op, "3-D input [N, C_in, L]");
  throws([&] { return conv_transpose1d(randn({2, 4, 5}), randn({3, 2, 3})); }, op, "has 4 channels");
  throws([&] { return conv_transpose1d(randn({2, 4, 5}), randn({4, 2, 3}), {}, {2, 2}); }, op,
         "stride must have 1 value");
  throws([&] { return conv_transpose1d(randn({2, 4, 5}), randn({4, 2, 3}), {}, 2, 0, 3); }, op,
         "output_padding must be smaller");
}

TEST_CASE("conv1d rejects bad arguments naming conv1d and the caller's shapes") {
  Tensor x = randn({2, 4, 7}), w = randn({6, 4, 3});
  const char* op = "conv1d";
  throws([&] { return conv1d(randn({2, 4, 5, 5}), w); }, op, "3-D input [N, C_in, L]");
  throws([&] { return conv1d(x, randn({6, 4, 3, 3})); }, op, "3-D weight");
  throws([&] { return conv1d(x, randn({6, 3, 3})); }, op, "input [2, 4, 7] has 4 channels, but weight [6, 3, 3]");
  throws([&] { return conv1d(x, randn({5, 2, 3}), {}, 1, 0, 1, 2); }, op, "output channels");
  throws([&] { return conv1d(x, randn({6, 4, 9})); }, op, "kernel size 9 is larger than the padded input 7");
  throws([&] { return conv1d(x, w, {}, {1, 1}); }, op, "stride must have 1 value");
  throws([&] { return conv1d(x, w, {}, 1, {1, 1}); }, op, "padding must have 1 value");
  throws([&] { return conv1d(x, w, randn({4})); }, op, "bias must be 1-D with C_out = 6");
  CHECK(conv1d(x, w, {}, 2, 1).sizes() == IntArrayRef({2, 6, 4}));
}

TEST_CASE("pixel_shuffle and pixel_unshuffle reject bad arguments") {
  throws([] { return pixel_shuffle(randn({4, 2}), 2); }, "pixel_shuffle", "at least 3 dims");
  throws([] { return pixel_shuffle(randn({1, 6, 2, 2}), 2); }, "pixel_shuffle", "(input.size(-3) = 6) must be divisible");
  throws([] { return pixel_shuffle(randn({1, 4, 2, 2}), 0); }, "pixel_shuffle", "upscale_factor must be positive");
  throws([] { return pixel_unshuffle(randn({1, 1, 4, 5}), 2); }, "pixel_unshuffle", "must be divisible by downscale");
  throws([] { return pixel_unshuffle(randn({1, 4, 4}), -1); }, "pixel_unshuffle", "downscale_factor must be positive");
}
