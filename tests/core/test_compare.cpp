// The tests' comparison helpers (compare.h, the CHECK forms of test_util.h) and Tensor::allclose
// fed what must fail them: NaN in either argument, an infinity against a finite value or the
// opposite infinity, and mismatched lengths or shapes (Note [Comparisons that see NaN]).
#include <limits>

#include "test_util.h"

using namespace gr;
using namespace gr::test;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Every (got, ref) pair that must not compare equal at any tolerance.
const std::vector<std::pair<double, double>> kMismatches = {
    {kNaN, 1.0}, {1.0, kNaN}, {kNaN, kNaN}, {kInf, 1.0}, {1.0, kInf}, {kInf, -kInf}, {-kInf, kInf},
    {kInf, kNaN}, {-kInf, 1e308}, {1e308, kInf}};

}  // namespace

TEST_CASE("abs_diff and max_nan keep NaN and infinities; equal values are 0 apart") {
  CHECK(abs_diff(1.5, 1.5) == 0);
  CHECK(abs_diff(kInf, kInf) == 0);
  CHECK(abs_diff(-kInf, -kInf) == 0);
  CHECK(abs_diff(1.0, 3.0) == 2.0);
  CHECK(std::isnan(abs_diff(kNaN, 1.0)));
  CHECK(std::isnan(abs_diff(1.0, kNaN)));
  CHECK(abs_diff(kInf, 1.0) == kInf);
  CHECK(abs_diff(1.0, -kInf) == kInf);
  CHECK(abs_diff(kInf, -kInf) == kInf);
  // std::max(worst, NaN) is worst: the bug max_nan exists for.
  CHECK(std::max(0.0, kNaN) == 0.0);
  CHECK(std::isnan(max_nan(0.0, kNaN)));
  CHECK(std::isnan(max_nan(kNaN, 5.0)));
  CHECK(max_nan(2.0, 5.0) == 5.0);
  CHECK(max_nan(kInf, 5.0) == kInf);
}

TEST_CASE("is_close and near: NaN and unequal infinities never match, at any tolerance") {
  for (auto [got, ref] : kMismatches) {
    CAPTURE(got);
    CAPTURE(ref);
    CHECK_FALSE(is_close(got, ref, 1e300, 1e300));
    CHECK_FALSE(is_close(got, ref, 0.5, 0.0));
    CHECK_FALSE(near(got, ref, 1e300));
    CHECK(std::isnan(abs_diff(got, ref)) == (std::isnan(got) || std::isnan(ref)));
    CHECK_FALSE(abs_diff(got, ref) <= 1e300);
  }
  CHECK(is_close(kInf, kInf, 0, 0));
  CHECK(near(-kInf, -kInf, 0));
  CHECK(is_close(1.0 + 1e-9, 1.0, 1e-8, 0));
  CHECK_FALSE(is_close(1.0 + 1e-7, 1.0, 1e-8, 0));
  CHECK(is_close(1e-9, 0.0, 0, 1e-8));
  CHECK(near(100.0 * (1 + 1e-13), 100.0, 1e-12));
  CHECK_FALSE(near(100.0 * (1 + 1e-10), 100.0, 1e-12));
}

TEST_CASE("max_abs_diff: NaN anywhere is NaN, an infinity is inf, lengths and shapes must match") {
  CHECK(max_abs_diff(std::vector<double>{1, 2, 3}, std::vector<double>{1, 2.5, 3}) == 0.5);
  for (auto [got, ref] : kMismatches) {
    CAPTURE(got);
    CAPTURE(ref);
    // The mismatch first, last and alone: a running maximum must not lose it.
    for (size_t at : {0, 2}) {
      std::vector<double> g{1, 2, 3}, r{1, 2, 3};
      g[at] = got, r[at] = ref;
      CHECK_FALSE(max_abs_diff(g, r) <= 1e300);
    }
    CHECK_FALSE(max_abs_diff(tensor({got}, kFloat64), tensor({ref}, kFloat64)) <= 1e300);
    CHECK_FALSE(max_rel_diff(tensor({got, 1.0}, kFloat64), tensor({ref, 1.0}, kFloat64)) <= 1e300);
  }
  CHECK(max_abs_diff(tensor({kInf, 1.0}, kFloat64), tensor({kInf, 1.0}, kFloat64)) == 0);
  CHECK_THROWS_WITH_AS(max_abs_diff(std::vector<double>{1, 2}, std::vector<double>{1, 2, 3}),
                       doctest::Contains("2 values against 3"), Error);
  CHECK_THROWS_WITH_AS(max_abs_diff(std::vector<double>{}, std::vector<double>{1}), doctest::Contains("0 values"),
                       Error);
  // [3] against [1] would broadcast in (a - b).abs().max(): refused here.
  CHECK_THROWS_WITH_AS(max_abs_diff(tensor({1.0, 1.0, 1.0}), tensor({1.0})), doctest::Contains("shapes [3] and [1]"),
                       Error);
  CHECK_THROWS_AS(max_abs_diff(zeros({2, 3}), zeros({3, 2})), Error);
  CHECK_THROWS_AS(max_rel_diff(zeros({2}), zeros({2, 1})), Error);
}

TEST_CASE("first_mismatch names the first bad index and counts; lengths must match") {
  auto exact = [](double x, double y) { return is_close(x, y, 0, 0); };
  CHECK(first_mismatch({1, 2}, {1, 2}, exact).empty());
  CHECK(first_mismatch({}, {}, exact).empty());
  const std::string m = first_mismatch({1, kNaN, 3, kInf}, {1, 2, 3, 4}, exact);
  CHECK(m.find("2 of 4 values differ") != std::string::npos);
  CHECK(m.find("flat index 1: nan vs 2") != std::string::npos);
  CHECK(first_mismatch({1, 2}, {1, 2, 3}, exact) == "2 values against 3 expected");
  CHECK(first_mismatch({1, 2, 3}, {1, 2}, exact) == "3 values against 2 expected");
  for (auto [got, ref] : kMismatches) CHECK_FALSE(first_mismatch({got}, {ref}, exact).empty());
}

TEST_CASE("Tensor::allclose: NaN and unequal infinities fail, shapes must match") {
  for (auto [got, ref] : kMismatches) {
    CAPTURE(got);
    CAPTURE(ref);
    CHECK_FALSE(tensor({got}, kFloat64).allclose(tensor({ref}, kFloat64), 1e-5, 1e-8));
    CHECK_FALSE(tensor({got}, kFloat64).allclose(tensor({ref}, kFloat64), 1.0, 1.0));
  }
  CHECK(tensor({kInf, -kInf, 1.0}, kFloat64).allclose(tensor({kInf, -kInf, 1.0}, kFloat64)));
  CHECK_THROWS_WITH_AS(zeros({3}).allclose(zeros({1})), doctest::Contains("shapes [3] and [1] differ"), Error);
}

TEST_CASE("same_values and max_ulp_distance: NaN only matches NaN, infinities only themselves, shapes must match") {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const float big = 3.3895314e38f;  // bfloat16's largest finite value: 1 ulp below infinity
  auto bf = [](std::vector<double> v) { return tensor(v, kFloat64).to(kBFloat16); };
  CHECK(max_ulp_distance(bf({1.0, 2.0}), bf({1.0, 2.0})) == 0);
  CHECK(max_ulp_distance(bf({1.0}), bf({1.0078125})) == 1);
  CHECK(max_ulp_distance(bf({nan}), bf({nan})) == 0);
  CHECK(max_ulp_distance(bf({inf}), bf({inf})) == 0);
  CHECK(max_ulp_distance(bf({big}), bf({inf})) > 1);
  CHECK(max_ulp_distance(bf({inf}), bf({big})) > 1);
  CHECK(max_ulp_distance(bf({nan}), bf({1.0})) > 1);
  CHECK(max_ulp_distance(bf({1.0}), bf({nan})) > 1);
  CHECK(max_ulp_distance(bf({inf}), bf({-inf})) > 1);
  CHECK_THROWS_AS(max_ulp_distance(bf({1.0, 2.0}), bf({1.0})), Error);
  CHECK_THROWS_AS(max_ulp_distance(bf({1.0}), bf({1.0, 2.0})), Error);

  auto f32 = [](std::vector<double> v) { return tensor(v, kFloat32); };
  CHECK(same_values(f32({kNaN, 1.0}), f32({kNaN, 1.0})));
  CHECK_FALSE(same_values(f32({kNaN}), f32({1.0})));
  CHECK_FALSE(same_values(f32({1.0}), f32({kNaN})));
  CHECK_FALSE(same_values(f32({kInf}), f32({-kInf})));
  CHECK_FALSE(same_values(f32({1.0, 2.0}), f32({1.0})));
  CHECK_FALSE(same_values(f32({1.0}), tensor({1.0}, kFloat64)));
}

TEST_CASE("close_mismatch and allclose_mismatch (check_close, check_allclose): NaN, infinities, shapes") {
  auto t = [](std::vector<double> v) { return tensor(v, kFloat64); };
  for (auto [got, ref] : kMismatches) {
    CAPTURE(got);
    CAPTURE(ref);
    CHECK_FALSE(close_mismatch(t({1.0, got}), t({1.0, ref}), 1e300).empty());
    CHECK_FALSE(allclose_mismatch(t({1.0, got}), t({1.0, ref}), 1e300, 1e300).empty());
  }
  CHECK(close_mismatch(t({1.0, kInf, -kInf}), t({1.0, kInf, -kInf}), 0).empty());
  CHECK(allclose_mismatch(t({1.0, -kInf}), t({1.0 + 1e-9, -kInf}), 1e-8, 0).empty());
  CHECK(close_mismatch(t({1.0, 1.0}), t({1.0}), 1) == "shapes [2] and [1] differ");
  CHECK(allclose_mismatch(t({1.0}), t({1.0, 1.0}), 1, 1) == "shapes [1] and [2] differ");
  CHECK(close_mismatch(zeros({2, 3}), zeros({3, 2}), 1) == "shapes [2, 3] and [3, 2] differ");
  // check_values compares a flat list: its count must match.
  CHECK(first_mismatch(values(t({1.0, 2.0})), {1.0, 2.0, 3.0}, [](double, double) { return true; }) ==
        "2 values against 3 expected");
}

TEST_CASE("the CHECK forms pass on equal values, infinities included") {
  check_close(tensor({1.0, kInf, -kInf}, kFloat64), tensor({1.0, kInf, -kInf}, kFloat64));
  check_values(tensor({1.0, kInf}, kFloat64), {1.0, kInf});
  check_allclose(tensor({1.0, -kInf}, kFloat64), tensor({1.0 + 1e-9, -kInf}, kFloat64), 1e-8, 0);
}
