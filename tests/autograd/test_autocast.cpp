// CPU autocast (gr::autocast, Note [Autocast]): state and guard nesting, which ops cast to
// bfloat16 or float32 and which keep their inputs' promoted dtype, float32 gradients for
// float32 leaves, the cast cache, disabled = unchanged bitwise, and F.linear and
// scaled_dot_product_attention under torch.autocast("cpu") from PyTorch 2.15
// (tests/data/bf16_reference.json).
#include <cmath>

#include "autograd/autocast.h"
#include "nn/functional.h"
#include "reference_util.h"

using namespace gr;
namespace F = gr::nn::functional;

namespace {

Tensor leaf(std::vector<int64_t> shape, ScalarType dtype = kFloat32) {
  return randn(shape, TensorOptions(dtype)).requires_grad_(true);
}

// Within one bfloat16 step of `ref` (2^-7 relative, plus `atol`); shapes must match.
void check_bf16_close(const Tensor& got, const Tensor& ref, double atol) {
  test::check_allclose(got, ref, std::ldexp(1.0, -7), atol);
}

// got holds bfloat16 values (as bfloat16, or as float32: the gradient of a float32 leaf
// through an autocast cast is a bfloat16 gradient widened) and each is at most one bfloat16
// step from ref's: what one rounding of a float32 value computed in another order allows.
void check_bf16_ulp(const Tensor& got, const Tensor& ref) {
  REQUIRE(got.sizes() == ref.sizes());
  CHECK(got.to(kBFloat16).to(got.scalar_type()).equal(got));
  CHECK(test::max_ulp_distance(got.to(kBFloat16), ref.to(kBFloat16)) <= 1);
}

// got holds bfloat16 values and is within `steps` rounding steps of bfloat16 values near the
// largest magnitude m of ref everywhere: |got - ref| <= steps * 2^-8 * m.
void check_bf16_steps(const Tensor& got, const Tensor& ref, double steps) {
  REQUIRE(got.sizes() == ref.sizes());
  CHECK(got.to(kBFloat16).to(got.scalar_type()).equal(got));
  const double d = test::max_abs_diff(got, ref), m = ref.abs().max().item<double>();
  CAPTURE(d);
  CAPTURE(m);
  CHECK(d <= steps * std::ldexp(1.0, -8) * m);
}

}  // namespace

TEST_CASE("autocast state: defaults, set/get, guard nesting restores, CUDA refused") {
  CHECK_FALSE(autocast::is_autocast_enabled(kCPU));
  CHECK(autocast::get_autocast_dtype(kCPU) == kBFloat16);
  CHECK(autocast::get_autocast_dtype(kCUDA) == kFloat16);
  CHECK(autocast::is_autocast_available(kCPU));
  CHECK(autocast::is_autocast_cache_enabled());
  {
    autocast::AutocastGuard outer(kCPU, kBFloat16);
    CHECK(autocast::is_autocast_enabled(kCPU));
    {
      autocast::AutocastGuard inner(kCPU, kFloat16, /*enabled=*/false, /*cache_enabled=*/false);
      CHECK_FALSE(autocast::is_autocast_enabled(kCPU));
      CHECK(autocast::get_autocast_dtype(kCPU) == kFloat16);
      CHECK_FALSE(autocast::is_autocast_cache_enabled());
    }
    CHECK(autocast::is_autocast_enabled(kCPU));
    CHECK(autocast::get_autocast_dtype(kCPU) == kBFloat16);
    CHECK(autocast::is_autocast_cache_enabled());
  }
  CHECK_FALSE(autocast::is_autocast_enabled(kCPU));
  autocast::set_autocast_enabled(kCPU, true);
  CHECK(autocast::is_autocast_enabled(kCPU));
  autocast::set_autocast_enabled(kCPU, false);
  CHECK_THROWS_WITH_AS(autocast::set_autocast_enabled(kCUDA, true),
                       doctest::Contains("autocast is not implemented for CUDA"), Error);
  CHECK_THROWS_AS(autocast::AutocastGuard(kCUDA, kFloat16), Error);
  CHECK_FALSE(autocast::is_autocast_enabled(kCUDA));
  CHECK(autocast::get_autocast_dtype(kCUDA) == kFloat16);
  CHECK_THROWS_WITH_AS(autocast::set_autocast_dtype(kCPU, kFloat32), doctest::Contains("bfloat16 or float16"), Error);
  autocast::set_autocast_enabled(kCUDA, false);  // switching off is always allowed
}

TEST_CASE("autocast lower-precision ops compute in bfloat16; their float32 leaves get float32 gradients") {
  Tensor x = leaf({4, 8}), w = leaf({6, 8}), b = leaf({6});
  Tensor y;
  {
    autocast::AutocastGuard guard(kCPU, kBFloat16);
    y = linear(x, w, b);
    CHECK(y.scalar_type() == kBFloat16);
    CHECK(matmul(x, w.t()).scalar_type() == kBFloat16);
    CHECK(mm(x, w.t()).scalar_type() == kBFloat16);
    CHECK(bmm(x.unsqueeze(0), w.t().unsqueeze(0)).scalar_type() == kBFloat16);
    CHECK(addmm(b, x, w.t()).scalar_type() == kBFloat16);
    CHECK(baddbmm(b, x.unsqueeze(0), w.t().unsqueeze(0)).scalar_type() == kBFloat16);
    CHECK(addbmm(b, x.unsqueeze(0), w.t().unsqueeze(0)).scalar_type() == kBFloat16);
    Tensor img = randn({1, 2, 5, 5}), k = randn({3, 2, 3, 3});
    CHECK(conv2d(img, k).scalar_type() == kBFloat16);
    CHECK(conv1d(randn({1, 2, 7}), randn({3, 2, 3})).scalar_type() == kBFloat16);
    CHECK(conv_transpose2d(img, randn({2, 3, 3, 3})).scalar_type() == kBFloat16);
    Tensor q = randn({2, 5, 8});
    CHECK(scaled_dot_product_attention(q, q, q, {}, 0.0, true).scalar_type() == kBFloat16);
    CHECK(prelu(randn({2, 3}), full({1}, 0.25)).scalar_type() == kBFloat16);
    // float64 and integer tensors are never cast.
    CHECK(matmul(randn({2, 3}, TensorOptions(kFloat64)), randn({3, 2}, TensorOptions(kFloat64))).scalar_type() ==
          kFloat64);
  }
  y.to(kFloat32).sum().backward();
  CHECK(x.grad().scalar_type() == kFloat32);
  CHECK(w.grad().scalar_type() == kFloat32);
  CHECK(b.grad().scalar_type() == kFloat32);
  // The gradient of sum(x w^T + b) with respect to x is the column sums of w (rounded to bf16).
  check_bf16_close(x.grad(), w.detach().sum({0}).expand({4, 8}), 1e-2);
}

TEST_CASE("autocast fp32 ops (losses) compute in float32; other ops keep their inputs' promoted dtype") {
  autocast::AutocastGuard guard(kCPU, kBFloat16);
  Tensor logits = randn({5, 7}).to(kBFloat16), labels = tensor(std::vector<int64_t>{0, 3, 6, 1, 2}, kInt64);
  CHECK(cross_entropy(logits, labels).scalar_type() == kFloat32);
  CHECK(nll_loss(log_softmax(logits, 1), labels).scalar_type() == kFloat32);
  CHECK(F::cross_entropy(logits, labels).scalar_type() == kFloat32);
  Tensor a = randn({3, 4}).to(kBFloat16), t = randn({3, 4});
  CHECK(mse_loss(a, t).scalar_type() == kFloat32);
  CHECK(F::l1_loss(a, t).scalar_type() == kFloat32);
  CHECK(F::smooth_l1_loss(a, t).scalar_type() == kFloat32);
  CHECK(prod(a).scalar_type() == kFloat32);
  // Not listed: the inputs' dtype, or their promotion (bf16 + float32 = float32).
  CHECK(relu(a).scalar_type() == kBFloat16);
  CHECK(softmax(a, 1).scalar_type() == kBFloat16);  // PyTorch's CPU autocast leaves softmax alone
  CHECK(layer_norm(a, {4}).scalar_type() == kBFloat16);
  CHECK((a + t).scalar_type() == kFloat32);
  CHECK((a * a).scalar_type() == kBFloat16);
}

TEST_CASE("autocast off (disabled guard, or outside any guard) leaves results unchanged bitwise") {
  Tensor x = randn({9, 33}), w = randn({17, 33}), b = randn({17});
  Tensor plain = linear(x, w, b);
  {
    autocast::AutocastGuard off(kCPU, kBFloat16, /*enabled=*/false);
    CHECK(linear(x, w, b).equal(plain));
  }
  {
    autocast::AutocastGuard on(kCPU, kBFloat16);
    CHECK_FALSE(linear(x, w, b).to(kFloat32).equal(plain));
  }
  CHECK(linear(x, w, b).equal(plain));
}

TEST_CASE("autocast caches the casts of parameters until the outermost guard ends") {
  Tensor w = leaf({3, 4}), plain = randn({3, 4});
  Tensor first;
  {
    autocast::AutocastGuard outer(kCPU, kBFloat16);
    first = autocast::cached_cast(kBFloat16, w, kCPU);
    CHECK(first.scalar_type() == kBFloat16);
    {
      autocast::AutocastGuard inner(kCPU, kBFloat16);
      CHECK(autocast::cached_cast(kBFloat16, w, kCPU).is_same(first));  // cleared only by the outermost
    }
    CHECK(autocast::cached_cast(kBFloat16, w, kCPU).is_same(first));
    // Not cached: tensors without grad, casts to float32, casts made without grad mode.
    CHECK_FALSE(autocast::cached_cast(kBFloat16, plain, kCPU).is_same(autocast::cached_cast(kBFloat16, plain, kCPU)));
    Tensor w2 = leaf({2});
    {
      NoGradGuard no_grad;
      CHECK_FALSE(autocast::cached_cast(kBFloat16, w2, kCPU).is_same(autocast::cached_cast(kBFloat16, w2, kCPU)));
    }
    CHECK(autocast::cached_cast(kBFloat16, w2, kCPU).grad_fn() != nullptr);
    CHECK(autocast::cached_cast(kFloat32, first, kCPU).scalar_type() == kFloat32);
    CHECK(autocast::cached_cast(kBFloat16, randn({2}, TensorOptions(kFloat64)), kCPU).scalar_type() == kFloat64);
  }
  autocast::AutocastGuard again(kCPU, kBFloat16);
  CHECK_FALSE(autocast::cached_cast(kBFloat16, w, kCPU).is_same(first));
}

TEST_CASE("autocast backward inside the guard runs in the forward's dtypes") {
  Tensor x = leaf({4, 8}), w = leaf({5, 8});
  autocast::AutocastGuard guard(kCPU, kBFloat16);
  Tensor loss = cross_entropy(linear(x, w), tensor(std::vector<int64_t>{0, 1, 2, 4}, kInt64));
  CHECK(loss.scalar_type() == kFloat32);
  loss.backward();
  CHECK(x.grad().scalar_type() == kFloat32);
  CHECK(w.grad().scalar_type() == kFloat32);
  CHECK(std::isfinite(w.grad().abs().sum().item<double>()));
}

TEST_CASE("autocast attention agrees with PyTorch 2.15's torch.autocast(\"cpu\"): bfloat16 out, float32 gradients") {
  const nlohmann::json ref = test::load_reference("bf16_reference.json");
  int n = 0;
  for (const auto& c : ref.at("cases")) {
    if (c.at("name") != "sdpa_autocast") continue;
    const bool causal = c.at("causal").get<bool>();
    CAPTURE(causal);
    auto input = [&](const char* name) { return test::tensor_from_json(c.at(name), kFloat32).requires_grad_(true); };
    Tensor q = input("q"), k = input("k"), v = input("v");
    Tensor out;
    {
      autocast::AutocastGuard guard(kCPU, kBFloat16);
      out = scaled_dot_product_attention(q, k, v, {}, 0.0, causal);
    }
    REQUIRE(out.scalar_type() == kBFloat16);
    (out.to(kFloat32) * test::tensor_from_json(c.at("up"), kFloat32)).sum().backward();
    for (const Tensor& t : {q, k, v}) REQUIRE(t.grad().scalar_type() == kFloat32);
    // Built with bfloat16 pair products (AVX512_BF16), gradring rounds P and dS to bfloat16
    // before their products as PyTorch's CPU kernel does: seen bitwise equal. Without them,
    // P and dS stay float32, which moves results by up to about one bfloat16 step of the
    // largest value (test_attention.cpp sees 1.6e-3 to 3.7e-3 of it between the two): 2 steps.
    check_bf16_steps(out, test::tensor_from_json(c.at("out")), 2);
    check_bf16_steps(q.grad(), test::tensor_from_json(c.at("grad_q")), 2);
    check_bf16_steps(k.grad(), test::tensor_from_json(c.at("grad_k")), 2);
    check_bf16_steps(v.grad(), test::tensor_from_json(c.at("grad_v")), 2);
    ++n;
  }
  CHECK(n == 2);
}

TEST_CASE("F.linear under autocast agrees with PyTorch 2.15's torch.autocast(\"cpu\")") {
  const nlohmann::json ref = test::load_reference("bf16_reference.json");
  int n = 0;
  for (const auto& c : ref.at("cases")) {
    if (c.at("name") != "linear_autocast") continue;
    Tensor x = test::tensor_from_json(c.at("x"), kFloat32).requires_grad_(true);
    Tensor w = test::tensor_from_json(c.at("weight"), kFloat32).requires_grad_(true);
    Tensor b = test::tensor_from_json(c.at("bias"), kFloat32).requires_grad_(true);
    Tensor y;
    {
      autocast::AutocastGuard guard(kCPU, kBFloat16);
      y = F::linear(x, w, b);
    }
    REQUIRE(y.scalar_type() == kBFloat16);
    // Each value is a float32 sum of products rounded once to bfloat16, as PyTorch's (seen
    // bitwise equal); a sum in another order can cross a rounding boundary: 1 step.
    check_bf16_ulp(y, test::tensor_from_json(c.at("out")));
    y.to(kFloat32).sum().backward();
    check_bf16_ulp(x.grad(), test::tensor_from_json(c.at("grad_x")));
    check_bf16_ulp(w.grad(), test::tensor_from_json(c.at("grad_weight")));
    check_bf16_ulp(b.grad(), test::tensor_from_json(c.at("grad_bias")));
    ++n;
  }
  CHECK(n == 2);
}
