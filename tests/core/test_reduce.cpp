// Reductions over dims, with keepdim, over strided inputs and in float64.
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
