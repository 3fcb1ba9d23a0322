// The comparison rule of gpu_selftest and bench_ops (apps/common/tolerance.h, Note [Comparison
// tolerances]) on the CPU: its edge cases, the H200 run's failing elements, and float32 sums
// of unit-normal products in two orders, which the rule must pass and a relative test fails.
#include <random>

#include "common/tolerance.h"
#include "test_util.h"

using namespace gr;
using apps::Comparison;
using apps::Tol;

TEST_CASE("Tol: |got - want| <= atol + rtol |want|, NaN only against NaN") {
  const Tol t{1e-4, 1e-5};
  CHECK(t.allows(1.0, 1.0));
  CHECK(t.allows(1.0 + 1e-4, 1.0));            // rtol
  CHECK_FALSE(t.allows(1.0 + 1.2e-4, 1.0));
  CHECK(t.allows(9e-6, 0.0));                  // atol near zero
  CHECK_FALSE(t.allows(1.1e-5, 0.0));
  CHECK_FALSE(t.allows(NAN, 1.0));
  CHECK_FALSE(t.allows(1.0, NAN));
  CHECK(t.allows(NAN, NAN));
  CHECK(t.allows(INFINITY, INFINITY));
  CHECK_FALSE(t.allows(INFINITY, 1.0));
  CHECK_FALSE(Tol{}.allows(1.0, 1.0 + 1e-15));  // exact
}

TEST_CASE("Comparison: the worst element against the tolerance, max |diff| and max rel") {
  Comparison c;
  const Tol t{0, 1e-3};
  c.add(1.0, 1.0, t);
  c.add(1.0005, 1.0, t);  // half the tolerance
  CHECK(c.ok);
  CHECK(c.elements == 2);
  CHECK(c.worst == doctest::Approx(0.5).epsilon(1e-6));
  CHECK(c.max_abs == doctest::Approx(5e-4).epsilon(1e-6));
  c.add(0.002, 0.0, t);
  CHECK_FALSE(c.ok);
  CHECK(c.worst == doctest::Approx(2.0).epsilon(1e-9));
  Comparison n;
  n.add(NAN, 0.0, t);
  CHECK_FALSE(n.ok);
  CHECK(std::isinf(n.worst));
}

TEST_CASE("f32_sum_tol: atol from the reduction length passes the H200 run's failures, rtol alone did not") {
  // gpu_selftest on the H200 (first run): conv_transpose2d (DCGAN, longest sum 3136 terms)
  // max |diff| 9.16e-5 at max rel 5.17e-2, linear +bias (768 terms) 7.25e-5 at 5.00e-2.
  const double want_ct = 9.16e-5 / 5.17e-2, want_lin = 7.25e-5 / 5.00e-2;
  const Tol old{1e-4, 1e-5};  // kF32Reduce, what they were checked with
  CHECK_FALSE(old.allows(want_ct + 9.16e-5, want_ct));
  CHECK_FALSE(old.allows(want_lin + 7.25e-5, want_lin));
  const Tol ct = apps::f32_sum_tol(16 * 14 * 14, 1e-4), lin = apps::f32_sum_tol(12 * 64, 1e-4);
  CHECK(ct.allows(want_ct + 9.16e-5, want_ct));
  CHECK(lin.allows(want_lin + 7.25e-5, want_lin));
  CHECK(ct.atol == doctest::Approx(4 * 3136 * 0x1p-24));
  CHECK(lin.atol == doctest::Approx(4 * 768 * 0x1p-24));
  // Short sums keep the floor; the tolerance grows with the length, not with the value.
  CHECK(apps::f32_sum_tol(8, 1e-5).atol == 1e-5);
  CHECK(apps::f32_sum_tol(8, 1e-5, 1e-6).atol == doctest::Approx(4 * 8 * 0x1p-24));
}

TEST_CASE("f32_sum_tol: float32 sums of unit-normal products in two orders pass; a relative test fails near zero") {
  // The situation of a reduction computed by two devices: the same K products, summed front to
  // back and back to front in float32 (recursive summation, the least accurate order).
  std::mt19937_64 rng(32);
  std::normal_distribution<float> normal;
  for (int64_t K : {128, 784, 3136}) {
    CAPTURE(K);
    const Tol tol = apps::f32_sum_tol(K, 1e-4);
    Comparison rule, relative;
    std::vector<float> terms(static_cast<size_t>(K));
    for (int e = 0; e < 20000; ++e) {
      for (float& t : terms) t = normal(rng) * normal(rng);
      float forward = 0, backward = 0;
      for (int64_t k = 0; k < K; ++k) forward += terms[static_cast<size_t>(k)];
      for (int64_t k = K - 1; k >= 0; --k) backward += terms[static_cast<size_t>(k)];
      rule.add(forward, backward, tol);
      relative.add(forward, backward, Tol{1e-4, 0});
    }
    CHECK(rule.ok);
    // Not loose beyond use: the worst element takes a tenth of it (0.4-0.5 K u of 4 K u).
    CHECK(rule.worst > 0.07);
    CHECK_FALSE(relative.ok);  // values near zero fail a relative test
  }
}

TEST_CASE("f32_sum_tol: linear +bias forward and backward in float32 against float64 (the selftest's shape)") {
  Generator g(40);
  Tensor x = randn({12, 64, 128}, kFloat64, &g), w = randn({384, 128}, kFloat64, &g), b = randn({384}, kFloat64, &g);
  Tensor gy = randn({12, 64, 384}, kFloat64, &g);
  auto run = [&](ScalarType t) {
    Tensor xi = x.to(t).requires_grad_(true), wi = w.to(t).requires_grad_(true), bi = b.to(t).requires_grad_(true);
    Tensor y = linear(xi, wi, bi);
    y.backward(gy.to(t));
    return TensorList{y.detach(), xi.grad(), wi.grad(), bi.grad()};
  };
  // The float64 results are exact next to float32's: one side's rounding, within the rule.
  const TensorList f32 = run(kFloat32), f64 = run(kFloat64);
  Comparison c;
  const Tol tol = apps::f32_sum_tol(12 * 64, 1e-4);
  for (size_t k = 0; k < f32.size(); ++k) {
    const std::vector<double> got = test::values(f32[k]), want = test::values(f64[k]);
    for (size_t i = 0; i < got.size(); ++i) c.add(got[i], want[i], tol);
  }
  CHECK(c.elements == 12 * 64 * 384 + 12 * 64 * 128 + 384 * 128 + 384);
  CHECK(c.ok);
}
