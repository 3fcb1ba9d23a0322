// The norm branch's ops beyond their OpInfo gradchecks: the fused first-order backward equals
// the differentiable one, float32 and bfloat16 paths, and every error names the op, the shapes
// and the dtypes.
#include "reference_util.h"

using namespace gr;

namespace {
Tensor leaf(std::vector<int64_t> shape, uint64_t seed, ScalarType t = kFloat64) {
  Generator g(seed);
  return randn(shape, TensorOptions(t), &g).requires_grad_(true);
}
// Gradients of sum(f(inputs) * upstream) with and without create_graph (the fused first-order
// kernels against the gr:: formulas).
void check_fused_equals_differentiable(const std::function<Tensor(const TensorList&)>& f, const TensorList& in,
                                       double tol) {
  Tensor y = f(in);
  Generator g(99);
  Tensor up = randn(y.sizes(), TensorOptions(y.scalar_type()), &g);
  TensorList fused = autograd::grad({y}, in, {up});
  TensorList diff = autograd::grad({f(in)}, in, {up}, std::nullopt, /*create_graph=*/true);
  for (size_t i = 0; i < in.size(); ++i) {
    CAPTURE(i);
    gr::test::check_close(fused[i], diff[i].detach(), tol);
  }
}
}  // namespace

TEST_CASE("layer_norm: fused backward equals the differentiable formula") {
  check_fused_equals_differentiable([](const TensorList& t) { return layer_norm(t[0], {7}, t[1], t[2]); },
                                    {leaf({4, 3, 7}, 1), leaf({7}, 2), leaf({7}, 3)}, 1e-10);
  check_fused_equals_differentiable([](const TensorList& t) { return layer_norm(t[0], {3, 7}); }, {leaf({4, 3, 7}, 4)},
                                    1e-10);
}

TEST_CASE("layer_norm: float32 agrees with float64, bfloat16 with PyTorch 2.15") {
  Tensor x = leaf({5, 33}, 5).detach() * 10 + 3, w = leaf({33}, 6).detach(), b = leaf({33}, 7).detach();
  Tensor ref = layer_norm(x, {33}, w, b);
  gr::test::check_close(layer_norm(x.to(kFloat32), {33}, w.to(kFloat32), b.to(kFloat32)).to(kFloat64), ref, 1e-4);
  // bfloat16 against PyTorch 2.15's bfloat16 layer_norm (tests/data/bf16_reference.json).
  const nlohmann::json bf16 = test::load_reference("bf16_reference.json");
  int n = 0;
  for (const auto& c : bf16.at("cases")) {
    if (c.at("name") != "layer_norm_bf16") continue;
    auto input = [&](const char* name) { return test::tensor_from_json(c.at(name), kFloat32).to(kBFloat16); };
    Tensor y16 = layer_norm(input("x"), {33}, input("weight"), input("bias"));
    REQUIRE(y16.scalar_type() == kBFloat16);
    // Computed in float32 and rounded once, as PyTorch's; the float32 mean and variance in
    // another summation order can move a result across a rounding boundary: 1 step (seen: 0).
    CHECK(test::max_ulp_distance(y16, test::tensor_from_json(c.at("out")).to(kBFloat16)) <= 1);
    ++n;
  }
  CHECK(n == 1);
  // Rows of constant values normalise to zero (variance 0) and a large offset is not cancelled.
  Tensor c = full({2, 16}, 1e4, TensorOptions(kFloat32)) + arange(16, TensorOptions(kFloat32)) * 1e-2;
  Tensor yc = layer_norm(c, {16});
  Tensor expect = layer_norm(c.to(kFloat64), {16}).to(kFloat32);
  CHECK(allclose(yc, expect, 1e-4, 1e-4));
  CHECK(layer_norm(full({3, 4}, 2.0, TensorOptions(kFloat32)), {4}).abs().max().item<float>() == 0.0f);
}

TEST_CASE("layer_norm: errors name the op, shapes and dtypes") {
  Tensor x = randn({2, 3, 4});
  CHECK(gr::test::error_of([&] { layer_norm(x, {3}); }).find("layer_norm: given normalized_shape=[3], expected input "
                                                             "with shape [*, 3], but got input of size [2, 3, 4]") !=
        std::string::npos);
  CHECK(gr::test::error_of([&] { layer_norm(x, {}); }).find("layer_norm: expected normalized_shape") != std::string::npos);
  CHECK(gr::test::error_of([&] { layer_norm(x, {4}, randn({3})); }).find("expected weight of shape [4]") !=
        std::string::npos);
  CHECK(gr::test::error_of([&] { layer_norm(x, {4}, {}, randn({4}, TensorOptions(kFloat64))); })
            .find("expected bias to be") != std::string::npos);
  CHECK(gr::test::error_of([&] { layer_norm(ones({2, 4}, TensorOptions(kInt64)), {4}); })
            .find("layer_norm: expected a floating point input, got int64") != std::string::npos);
}
