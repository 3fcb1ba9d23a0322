// Reductions over dims, with keepdim, over strided inputs and in float64.
#include <cmath>

#include "core/native/reduce/lane_sums.h"
#include "test_util.h"

using namespace gr;
using gr::test::check_values;

TEST_CASE("sum and mean over dims") {
  Tensor a = arange(24, kFloat64).reshape({2, 3, 4});
  check_values(a.sum(), {276});
  check_values(a.sum({0}), {12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 34});
  check_values(a.sum({1, 2}), {66, 210});
  check_values(a.sum({0, 2}), {60, 92, 124});  // not a contiguous block of dims
  check_values(a.sum({-1}), {6, 22, 38, 54, 70, 86});
  CHECK(a.sum({1}, true).sizes() == IntArrayRef({2, 1, 4}));
  check_values(a.mean({0, 1, 2}), {11.5});
  check_values(a.mean({2}), {1.5, 5.5, 9.5, 13.5, 17.5, 21.5});
  check_values(a.permute({2, 0, 1}).sum({0}), {6, 22, 38, 54, 70, 86});
  CHECK(tensor({1, 2, 3}).sum().scalar_type() == kInt64);
  check_values(tensor({1, 0, 1}).to(kBool).sum(), {2});
  CHECK(tensor({1, 0, 1}).to(kBool).sum().scalar_type() == kInt64);
  check_values(zeros({0, 3}).sum({0}), {0, 0, 0});
  CHECK_THROWS_WITH_AS(a.sum({3}), doctest::Contains("out of range"), gr::Error);
  CHECK_THROWS_WITH_AS(a.sum({1, 1}), doctest::Contains("more than once"), gr::Error);
  CHECK_THROWS_WITH_AS(tensor({1, 2}).mean(), doctest::Contains("floating point"), gr::Error);
}

TEST_CASE("var matches the two-pass formula") {
  Tensor a = tensor({1.0, 2.0, 4.0, 7.0}, kFloat64);
  check_values(a.var(), {7.0});                  // unbiased: 21 / 3
  check_values(a.var({}, false), {5.25});        // biased: 21 / 4
  Tensor m = a.reshape({2, 2});
  check_values(m.var({1}), {0.5, 4.5});
  check_values(m.var({0}, false, true), {2.25, 6.25});
}

TEST_CASE("max, min and argmax") {
  Tensor a = tensor({3.0, 7.0, 1.0, 7.0, 2.0, 5.0}, kFloat64).reshape({2, 3});
  check_values(a.max(), {7});
  check_values(a.min(), {1});
  auto [v, i] = a.max(1);
  check_values(v, {7, 7});
  check_values(i, {1, 0});
  auto [v0, i0] = a.min(0, true);
  CHECK(v0.sizes() == IntArrayRef({1, 3}));
  check_values(v0, {3, 2, 1});
  check_values(i0, {0, 1, 0});
  check_values(a.argmax(), {1});  // first occurrence
  check_values(a.argmax(0), {1, 0, 1});
  CHECK_THROWS_WITH_AS(zeros({0}).max(), doctest::Contains("non-empty"), gr::Error);
  CHECK_THROWS_WITH_AS(zeros({2, 0}).max(1), doctest::Contains("non-zero size"), gr::Error);
}

TEST_CASE("large reductions run in parallel and stay accurate") {
  Tensor big = ones({1000, 1000}, kFloat32);
  check_values(big.sum(), {1e6});
  Tensor cols = big.sum({0});
  CHECK(cols.numel() == 1000);
  check_values(cols.slice(0, 0, 3), {1000, 1000, 1000});
  Tensor third = full({3000000}, 0.1, kFloat32);
  CHECK(third.sum().item<double>() == doctest::Approx(300000.0).epsilon(1e-6));
}

// See Note [Lane folds] and Note [NaN-blind extremes]: fold_row's vector max/min must give
// lane_fold's result bit for bit (NaN for NaN), for every tail length and NaN position; its
// float sum (Note [Float sums in a cascade]) agrees to float rounding.
TEST_CASE("fold_row's vector folds equal lane_fold") {
  namespace N = gr::native;
  namespace ops = gr::reduce_ops;
  std::vector<float> v(1100);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((static_cast<int64_t>(i * 7919) % 2001) - 1000) * 0.37f;
  auto same = [](double a, double b) { return a == b || (a != a && b != b); };
  for (int64_t n : {0, 1, 15, 16, 17, 31, 32, 33, 100, 1024, 1027}) {
    for (int64_t nan_at : {-1, 0, 5, 40, 1025}) {
      std::vector<float> w = v;
      if (nan_at >= 0) w[static_cast<size_t>(nan_at)] = NAN;
      const float* p = w.data();
      auto at = [p](int64_t i) { return p[i]; };
      CAPTURE(n);
      CAPTURE(nan_at);
      const double sum = N::lane_fold(ops::Sum<double>{}, n, at), got = N::fold_row(ops::Sum<double>{}, p, n);
      const double magnitude = N::lane_fold(ops::Sum<double>{}, n, [p](int64_t i) { return std::abs(double(p[i])); });
      if (nan_at >= 0 && nan_at < n) CHECK(std::isnan(got));
      else CHECK(std::abs(got - sum) <= 1e-6 * magnitude);
      CHECK(same(N::fold_row(ops::Max<float>{}, p, n), N::lane_fold(ops::Max<float>{}, n, at)));
      CHECK(same(N::fold_row(ops::Min<float>{}, p, n), N::lane_fold(ops::Min<float>{}, n, at)));
    }
  }
}

// See Note [Float sums in a cascade]: float lanes keep their error flat on long rows. Positive
// values are the hard case (a plain float sum of 10^6 to 10^7 of them is off by 1e-5 to 3e-5); the
// error relative to a double sum must stay near float's epsilon, directly and through sum()
// and mean() (rows cut into chunks).
TEST_CASE("float row sums stay accurate on long rows") {
  namespace N = gr::native;
  uint64_t state = 12345;
  for (int64_t n : {1000000, 3000001, 10000000}) {
    std::vector<float> v(static_cast<size_t>(n));
    for (float& x : v) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      x = static_cast<float>(state >> 40) / static_cast<float>(1 << 24);  // uniform in [0, 1)
    }
    double want = 0;
    for (float x : v) want += x;
    const double direct = N::fold_row(gr::reduce_ops::Sum<double>{}, v.data(), n);
    CAPTURE(n);
    CHECK(std::abs(direct - want) / want < 2e-7);
    Tensor t = from_blob(v.data(), {n}, kFloat32);
    CHECK(std::abs(t.sum().item<double>() - want) / want < 2e-7);
    CHECK(std::abs(t.reshape({1, n}).sum(-1).item<double>() - want) / want < 2e-7);
    CHECK(std::abs(t.mean().item<double>() - want / n) / (want / n) < 2e-7);
  }
}

TEST_CASE("logsumexp's fused kernel: infinite and NaN rows, other dims") {
  const float inf = INFINITY;
  Tensor x = tensor({-inf, -inf, 1.0f, inf, 0.0f, NAN, 2.0f, 3.0f}).reshape({4, 2});
  Tensor r = x.logsumexp({1});
  CHECK(r[0].item<float>() == -inf);
  CHECK(r[1].item<float>() == inf);
  CHECK(std::isnan(r[2].item<float>()));
  CHECK(r[3].item<float>() == doctest::Approx(3.0 + std::log1p(std::exp(-1.0))).epsilon(1e-6));
  // Strided rows (inner > 1) and several dims agree with the composition.
  Tensor a = arange(60, kFloat32).reshape({3, 4, 5}) * 0.1;
  for (std::vector<int64_t> dims : {std::vector<int64_t>{1}, {0}, {0, 2}, {2}}) {
    Tensor want = (a - 2.0).exp().sum(dims).log() + 2.0;
    CHECK(a.logsumexp(dims).allclose(want, 1e-5, 1e-6));
  }
}
