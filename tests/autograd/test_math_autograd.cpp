// Autograd of the math family beyond gradcheck (test_math_op_info.cpp): node names, in-place
// rules (leaves, version counters, history moving onto self), gradients at clamp's ties, and
// no history for comparisons and under NoGradGuard.
#include "test_util.h"

using namespace gr;
using gr::test::check_values;
using gr::test::error_of;
using gr::test::f64_grad;

TEST_CASE("math ops record their backward nodes; comparisons and NoGradGuard record none") {
  Tensor x = tensor({0.5, -0.25}, f64_grad()), y = tensor({2.0, 3.0}, f64_grad());
  CHECK(sin(x).grad_fn()->name() == "SinBackward0");
  CHECK(erfinv(x).grad_fn()->name() == "ErfinvBackward0");
  CHECK(floor(x).grad_fn()->name() == "FloorBackward0");
  CHECK(atan2(x, y).grad_fn()->name() == "Atan2Backward0");
  CHECK(clamp(x, 0, 1).grad_fn()->name() == "ClampBackward1");
  CHECK(lerp(x, y, 0.5).grad_fn()->name() == "LerpBackward0");
  CHECK(softplus(x).grad_fn()->name() == "SoftplusBackward0");
  CHECK(!(x < y).requires_grad());
  CHECK(!isnan(x).requires_grad());
  CHECK(!logical_and(x, y).requires_grad());
  NoGradGuard guard;
  CHECK(!cos(x).requires_grad());
  Tensor z = x * 1.0;
  z.sin_();
  CHECK(!z.requires_grad());
}

TEST_CASE("in-place math follows autograd's in-place rules") {
  Tensor x = tensor({0.5, -0.25}, f64_grad());
  std::string e = error_of([&] { x.sin_(); });
  CHECK(e.find("sin_: a leaf Variable that requires grad") != std::string::npos);
  CHECK(error_of([&] { x.clamp_(0, 1); }).find("clamp_: a leaf Variable") != std::string::npos);

  // An in-place change of a tensor another node saved is caught at backward.
  Tensor a = x * 1.0;
  Tensor b = a.sin();  // saves a
  a.cos_();
  CHECK(error_of([&] { b.sum().backward(); }).find("modified by an inplace operation") != std::string::npos);

  // History moves onto self: y does not require grad, w does; y.atan2_(w) makes y depend on w.
  Tensor w = tensor({1.0, 2.0}, f64_grad());
  Tensor y = tensor({3.0, 4.0}, kFloat64);
  y.atan2_(w);
  CHECK(y.requires_grad());
  CHECK(y.grad_fn()->name() == "Atan2Backward0");
  y.sum().backward();
  check_values(w.grad(), {-3.0 / 10, -4.0 / 20});  // d atan2(a, b)/db = -a / (a^2 + b^2)

  // A chain of in-place ops on one non-leaf: each node reads the value it was given (ops that
  // read their input save a clone of it, so the next op may overwrite self).
  Tensor v = tensor({0.3, 0.6}, f64_grad());
  Tensor u = v * 2.0;
  u.sin_().cos_().clamp_(-10, 10);
  u.sum().backward();
  std::vector<double> got = gr::test::values(v.grad());
  for (int k = 0; k < 2; ++k) {
    double vi = k == 0 ? 0.3 : 0.6;
    CHECK(got[k] == doctest::Approx(-std::sin(std::sin(2 * vi)) * std::cos(2 * vi) * 2));
  }
  // An op that saves its result (exp_) fails at backward once a later op overwrites it, as torch's.
  Tensor t = v * 2.0;
  t.exp_().sin_();
  CHECK(error_of([&] { t.sum().backward(); }).find("modified by an inplace operation") != std::string::npos);
}

TEST_CASE("clamp's gradient at the bounds follows torch") {
  // Ties go to the input; outside, nothing (number bounds).
  Tensor x = tensor({-1.0, 0.0, 0.5, 1.0, 2.0}, f64_grad());
  clamp(x, 0.0, 1.0).sum().backward();
  check_values(x.grad(), {0, 1, 1, 1, 0});
  // Tensor bounds: x where lo <= x <= hi, lo where x < lo < hi, hi where x > hi or hi < lo.
  Tensor x2 = tensor({-1.0, 0.0, 0.5, 1.0, 2.0, 0.5}, f64_grad());
  Tensor lo = tensor({0.0, 0.0, 0.0, 0.0, 0.0, 2.0}, f64_grad());
  Tensor hi = tensor({1.0, 1.0, 1.0, 1.0, 1.0, 1.0}, f64_grad());
  clamp(x2, lo, hi).sum().backward();
  check_values(x2.grad(), {0, 1, 1, 1, 0, 0});
  check_values(lo.grad(), {1, 0, 0, 0, 0, 0});
  check_values(hi.grad(), {0, 0, 0, 0, 1, 1});
  // A broadcast bound gets its gradient summed.
  Tensor x3 = tensor({-1.0, 2.0, 0.5}, f64_grad()), m = tensor({0.0}, f64_grad());
  clamp_min(x3, m).sum().backward();
  check_values(m.grad(), {1});
  check_values(x3.grad(), {0, 1, 1});
}
