// nn::init: gains, the statistics of the random initialisers over large tensors, exact
// values of the structured ones (constant, eye, dirac), orthogonality, truncation bounds,
// libtorch's enum spellings and the errors.
#include <cmath>

#include "test_util.h"

using namespace gr;
namespace init = gr::nn::init;
using gr::test::error_of;

namespace {
double mean_of(const Tensor& t) { return t.to(kFloat64).mean().item<double>(); }
double std_of(const Tensor& t) { return t.to(kFloat64).std().item<double>(); }
double max_of(const Tensor& t) { return t.max().item<double>(); }
double min_of(const Tensor& t) { return t.min().item<double>(); }
}  // namespace

TEST_CASE("init::calculate_gain: every nonlinearity, as PyTorch") {
  for (init::NonlinearityType n : {init::NonlinearityType(kLinear), init::NonlinearityType(kConv1D),
                                   init::NonlinearityType(kConv2D), init::NonlinearityType(kConv3D),
                                   init::NonlinearityType(kConvTranspose1D), init::NonlinearityType(kConvTranspose2D),
                                   init::NonlinearityType(kConvTranspose3D), init::NonlinearityType(kSigmoid)})
    CHECK(init::calculate_gain(n) == 1.0);
  CHECK(init::calculate_gain(kTanh) == doctest::Approx(5.0 / 3.0));
  CHECK(init::calculate_gain(kReLU) == doctest::Approx(std::sqrt(2.0)));
  CHECK(init::calculate_gain(kLeakyReLU) == doctest::Approx(std::sqrt(2.0 / (1 + 0.01 * 0.01))));
  CHECK(init::calculate_gain(kLeakyReLU, 0.2) == doctest::Approx(std::sqrt(2.0 / 1.04)));
  CHECK(init::calculate_gain(kSELU) == 0.75);
  CHECK(init::calculate_gain(init::Nonlinearity::Tanh) == doctest::Approx(5.0 / 3.0));
}

TEST_CASE("init: xavier and kaiming statistics over large tensors") {
  Generator g(7);
  Tensor w = empty({200, 300});
  init::xavier_uniform_(w, 2.0, &g);
  const double xb = 2.0 * std::sqrt(6.0 / 500.0);
  CHECK(max_of(w) <= xb);
  CHECK(min_of(w) >= -xb);
  CHECK(max_of(w) > 0.99 * xb);
  CHECK(std_of(w) == doctest::Approx(xb / std::sqrt(3.0)).epsilon(0.02));

  Tensor n = empty({400, 600}, kFloat64);
  init::xavier_normal_(n, 0.5, &g);
  CHECK(std::abs(mean_of(n)) < 1e-3);
  CHECK(std_of(n) == doctest::Approx(0.5 * std::sqrt(2.0 / 1000.0)).epsilon(0.02));

  Tensor k = empty({128, 64, 3, 3});  // fan_in 576, fan_out 1152
  init::kaiming_uniform_(k, 0, kFanIn, kReLU, &g);
  const double kb = std::sqrt(2.0) * std::sqrt(3.0 / 576.0);
  CHECK(max_of(k) <= kb);
  CHECK(min_of(k) >= -kb);
  CHECK(std_of(k) == doctest::Approx(kb / std::sqrt(3.0)).epsilon(0.02));
  init::kaiming_normal_(k, 0.2, kFanOut, kLeakyReLU, &g);
  CHECK(std_of(k) == doctest::Approx(std::sqrt(2.0 / 1.04) / std::sqrt(1152.0)).epsilon(0.02));
  // libtorch's default: a = 0, fan_in, leaky_relu (with slope a = 0: ReLU's gain).
  const double def = std::sqrt(3.0) * std::sqrt(2.0) / std::sqrt(576.0);
  Tensor k2 = empty({128, 64, 3, 3});
  init::kaiming_uniform_(k2);
  CHECK(max_of(k2) <= def);
  CHECK(max_of(k2) > 0.99 * def);

  Tensor u = empty({100000}, kFloat64);
  init::uniform_(u, -3, 5, &g);
  CHECK(min_of(u) >= -3);
  CHECK(max_of(u) < 5);
  CHECK(mean_of(u) == doctest::Approx(1.0).epsilon(0.02));
  init::normal_(u, 2, 0.5, &g);
  CHECK(mean_of(u) == doctest::Approx(2.0).epsilon(0.01));
  CHECK(std_of(u) == doctest::Approx(0.5).epsilon(0.02));
  // Zero-element tensors are left alone, as PyTorch does.
  Tensor empty_w = empty({0, 4});
  CHECK_NOTHROW(init::kaiming_normal_(empty_w));
}

TEST_CASE("init::trunc_normal_: within [a, b], with the truncated normal's mean and std") {
  Generator g(11);
  Tensor t = empty({200000}, kFloat64);
  const double mu = 1, sigma = 2, a = -1, b = 2;
  init::trunc_normal_(t, mu, sigma, a, b, &g);
  CHECK(min_of(t) >= a);
  CHECK(max_of(t) <= b);
  CHECK(min_of(t) < a + 0.01);
  CHECK(max_of(t) > b - 0.01);
  auto phi = [](double x) { return std::exp(-x * x / 2) / std::sqrt(2 * M_PI); };
  auto cdf = [](double x) { return (1 + std::erf(x / std::sqrt(2.0))) / 2; };
  const double al = (a - mu) / sigma, be = (b - mu) / sigma, z = cdf(be) - cdf(al);
  const double mean = mu + sigma * (phi(al) - phi(be)) / z;
  const double var = sigma * sigma * (1 + (al * phi(al) - be * phi(be)) / z - std::pow((phi(al) - phi(be)) / z, 2));
  CHECK(mean_of(t) == doctest::Approx(mean).epsilon(0.01));
  CHECK(std_of(t) == doctest::Approx(std::sqrt(var)).epsilon(0.01));
  Tensor f = empty({1000});  // float32 and defaults: [-2, 2]
  init::trunc_normal_(f);
  CHECK(min_of(f) >= -2);
  CHECK(max_of(f) <= 2);
}

TEST_CASE("init: exact values of constant_, ones_, zeros_, eye_ and dirac_") {
  Tensor t = empty({2, 3});
  init::constant_(t, 2.5);
  CHECK(gr::test::values(t) == std::vector<double>(6, 2.5));
  init::ones_(t);
  CHECK(gr::test::values(t) == std::vector<double>(6, 1.0));
  init::zeros_(t);
  CHECK(gr::test::values(t) == std::vector<double>(6, 0.0));
  Tensor i = empty({3, 5}, kFloat64);
  init::eye_(i);
  CHECK(gr::test::values(i) == std::vector<double>{1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0});
  // A parameter stays a leaf that requires grad.
  Tensor p = empty({4, 4}).requires_grad_(true);
  init::eye_(p);
  CHECK(p.requires_grad());
  CHECK(p.grad_fn() == nullptr);

  // dirac_: a convolution with the weight copies the first min(out, in) channels.
  Tensor w = empty({4, 2, 3, 3}, kFloat64);
  init::dirac_(w);
  Tensor x = randn({1, 2, 5, 5}, kFloat64);
  Tensor y = gr::conv2d(x, w, {}, 1, 1);
  gr::test::check_close(y.narrow(1, 0, 2), x);
  CHECK(y.narrow(1, 2, 2).abs().max().item<double>() == 0.0);
  // groups = 2 on a 3-d weight: out channel g * 3 + d takes in channel d.
  Tensor w3 = empty({6, 2, 3}, kFloat64);
  init::dirac_(w3, 2);
  std::vector<double> expected(36, 0.0);
  for (int g = 0; g < 2; ++g)
    for (int d = 0; d < 2; ++d) expected[(g * 3 + d) * 6 + d * 3 + 1] = 1.0;
  CHECK(gr::test::values(w3) == expected);
}

TEST_CASE("init::orthogonal_: (semi-)orthogonal rows or columns, times gain") {
  Generator g(3);
  Tensor tall = empty({10, 6}, kFloat64);
  init::orthogonal_(tall, 1.0, &g);
  gr::test::check_close(gr::mm(tall.t(), tall), eye(6, kFloat64), 1e-12);
  Tensor wide = empty({6, 10}, kFloat64);
  init::orthogonal_(wide, 2.0, &g);
  gr::test::check_close(gr::mm(wide, wide.t()), eye(6, kFloat64) * 4.0, 1e-12);
  Tensor conv = empty({4, 2, 3, 1});  // float32, flattened to [4, 6]
  init::orthogonal_(conv, 1.0, &g);
  Tensor flat = conv.reshape({4, 6}).to(kFloat64);
  gr::test::check_close(gr::mm(flat, flat.t()), eye(4, kFloat64), 1e-6);
  // Seeded: the same generator state gives the same matrix.
  Generator g1(5), g2(5);
  Tensor a = empty({5, 5}), b = empty({5, 5});
  init::orthogonal_(a, 1.0, &g1);
  init::orthogonal_(b, 1.0, &g2);
  CHECK(gr::equal(a, b));
}

TEST_CASE("init::sparse_: round-up(sparsity * rows) zeros in each column") {
  Generator g(9);
  Tensor s = empty({10, 8}, kFloat64);
  init::sparse_(s, 0.25, 0.5, &g);
  Tensor zeros_per_column = (s == 0).sum({0});
  CHECK(gr::test::values(zeros_per_column) == std::vector<double>(8, 3.0));
}

TEST_CASE("init: errors name the initialiser and the shape") {
  Tensor v = empty({4}), c = empty({2, 3, 4});
  CHECK(error_of([&] { init::eye_(c); }) == "eye_: only tensors with 2 dimensions are supported, got shape [2, 3, 4]");
  CHECK(error_of([&] { init::dirac_(empty({2, 3})); }) ==
        "dirac_: only tensors with 3, 4, or 5 dimensions are supported, got shape [2, 3]");
  CHECK(error_of([&] { init::dirac_(empty({3, 3, 3}), 2); }) == "dirac_: dim 0 (3) must be divisible by groups (2)");
  CHECK(error_of([&] { init::orthogonal_(v); }) ==
        "orthogonal_: only tensors with 2 or more dimensions are supported, got shape [4]");
  CHECK(error_of([&] { init::sparse_(c, 0.1); }) == "sparse_: only tensors with 2 dimensions are supported, got shape [2, 3, 4]");
  CHECK(error_of([&] { init::trunc_normal_(v, 0, 1, 2, -2); }) ==
        "trunc_normal_: expected std > 0 and a < b, got std=1, a=2, b=-2");
  CHECK(error_of([&] { init::xavier_uniform_(v); }) ==
        "fan in and fan out can not be computed for tensor with fewer than 2 dimensions (got 1)");
  CHECK(error_of([&] { init::normal_(empty({3}, kInt64)); }) ==
        "normal_: not implemented for dtype int64 (a floating point tensor is required; tensor of shape [3])");
}
