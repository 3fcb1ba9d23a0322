// Element-wise ops: broadcasting, dtype promotion, strided inputs, in-place forms.
#include <cmath>

#include "test_util.h"

using namespace gr;
using gr::test::check_values;
using gr::test::values;

TEST_CASE("binary ops broadcast like NumPy") {
  Tensor a = arange(6, kFloat32).reshape({2, 3});
  check_values(a + tensor({10.0, 20.0, 30.0}), {10, 21, 32, 13, 24, 35});
  check_values(a + tensor({100.0, 200.0}).reshape({2, 1}), {100, 101, 102, 203, 204, 205});
  check_values(a * 2.0, {0, 2, 4, 6, 8, 10});
  check_values(1.0 - a, {1, 0, -1, -2, -3, -4});
  check_values(a / 2.0, {0, 0.5, 1, 1.5, 2, 2.5});
  check_values(sub(a, a, 2), {0, -1, -2, -3, -4, -5});
  check_values(add(a, ones({3}), 0.5), {0.5, 1.5, 2.5, 3.5, 4.5, 5.5});
  check_values(zeros({3, 1, 2}) + zeros({4, 1}), std::vector<double>(24, 0.0));
  CHECK((zeros({3, 1, 2}) + zeros({4, 1})).sizes() == IntArrayRef({3, 4, 2}));
  CHECK_THROWS_WITH_AS(a + zeros({2}), doctest::Contains("cannot be broadcast"), gr::Error);
}

TEST_CASE("dtype promotion follows torch") {
  Tensor i = tensor({1, 2, 3});
  CHECK((i + i).scalar_type() == kInt64);
  CHECK((i + 1.5).scalar_type() == kFloat32);
  CHECK((i + tensor({1.0, 1.0, 1.0}, kFloat64)).scalar_type() == kFloat64);
  CHECK((tensor({1.0}, kFloat32) + tensor({1.0}, kFloat64)).scalar_type() == kFloat64);
  CHECK((tensor({1.0}, kFloat32) * 2.0).scalar_type() == kFloat32);  // a scalar doesn't promote
  CHECK((i / i).scalar_type() == kFloat32);                          // true division
  check_values(i / tensor({2, 2, 2}), {0.5, 1, 1.5});
  CHECK(i.pow(2).scalar_type() == kInt64);
  check_values(i.pow(2), {1, 4, 9});
  CHECK_THROWS_WITH_AS(i.pow(-1), doctest::Contains("negative integer powers"), gr::Error);
  CHECK(exp(i).scalar_type() == kFloat32);
}

TEST_CASE("unary math") {
  Tensor x = tensor({-2.0, -0.5, 0.0, 0.5, 2.0}, kFloat64);
  check_values(relu(x), {0, 0, 0, 0.5, 2});
  check_values(abs(x), {2, 0.5, 0, 0.5, 2});
  check_values(neg(x), {2, 0.5, 0, -0.5, -2});
  std::vector<double> v = values(x);
  std::vector<double> s, t, e;
  for (double xi : v) s.push_back(1 / (1 + std::exp(-xi))), t.push_back(std::tanh(xi)), e.push_back(std::exp(xi));
  check_values(sigmoid(x), s);
  check_values(tanh(x), t);
  check_values(exp(x), e);
  check_values(log(tensor({1.0, std::exp(2.0)}, kFloat64)), {0, 2});
  check_values(sqrt(tensor({4.0, 9.0}, kFloat64)), {2, 3});
  check_values(x.pow(2.0), {4, 0.25, 0, 0.25, 4});
  check_values(tensor({4.0}, kFloat64).pow(0.5), {2});
  check_values(pow(tensor({2.0, 3.0}, kFloat64), tensor({3.0, 2.0}, kFloat64)), {8, 9});
  check_values(maximum(x, zeros({1}, kFloat64)), {0, 0, 0, 0.5, 2});
  check_values(minimum(x, zeros({1}, kFloat64)), {-2, -0.5, 0, 0, 0});
  CHECK(std::isnan(values(maximum(tensor({NAN}), tensor({1.0})))[0]));
}

TEST_CASE("comparisons give bool tensors and where selects") {
  Tensor x = tensor({1.0, 2.0, 3.0});
  Tensor m = x.gt(1.5);
  CHECK(m.scalar_type() == kBool);
  check_values(m, {0, 1, 1});
  check_values(x.eq(2), {0, 1, 0});
  check_values(x.ne(tensor({1.0, 0.0, 3.0})), {0, 1, 0});
  check_values(x.le(2), {1, 1, 0});
  check_values(x.lt(2), {1, 0, 0});
  check_values(x.ge(3), {0, 0, 1});
  check_values(where(m, x, zeros({1})), {0, 2, 3});
  check_values(where(m, x, -1.0), {-1, 2, 3});
  CHECK_THROWS_WITH_AS(where(x, x, x), doctest::Contains("bool"), gr::Error);
}

TEST_CASE("strided and broadcast operands give the same result as contiguous ones") {
  Tensor base = randn({5, 7}, kFloat64);
  Tensor t = base.t();  // non-contiguous
  Tensor expect = t.contiguous() * t.contiguous() + 1.0;
  gr::test::check_close(t * t + 1.0, expect);
  Tensor strided = base.slice(1, 0, 7, 2);
  gr::test::check_close(exp(strided), exp(strided.contiguous()));
  // Large enough to run on several threads.
  Tensor big = randn({300, 300}, kFloat32);
  Tensor row = randn({300}, kFloat32);
  Tensor r1 = big.t() + row, r2 = big.t().contiguous() + row;
  CHECK(r1.equal(r2));
}

TEST_CASE("in-place ops write into self and bump the version") {
  Tensor a = ones({2, 2});
  uint32_t v0 = a._version();
  a.add_(tensor({1.0, 2.0}));
  check_values(a, {2, 3, 2, 3});
  a.mul_(2.0);
  check_values(a, {4, 6, 4, 6});
  a.sub_(1.0);
  a.div_(tensor({3.0, 5.0}));
  check_values(a, {1, 1, 1, 1});
  a.zero_();
  check_values(a, {0, 0, 0, 0});
  CHECK(a._version() > v0);
  a += 2.0;
  a *= a;
  check_values(a, {4, 4, 4, 4});
  CHECK_THROWS_WITH_AS(a.add_(ones({3})), doctest::Contains("cannot be broadcast"), gr::Error);
  CHECK_THROWS_WITH_AS(ones({1}).add_(ones({3})), doctest::Contains("doesn't match the broadcast shape"), gr::Error);
  CHECK_THROWS_WITH_AS(tensor({1, 2}).add_(1.5), doctest::Contains("can't be cast"), gr::Error);
  Tensor r = tensor({-1.0, 2.0});
  r.relu_();
  check_values(r, {0, 2});
}

TEST_CASE("bfloat16 and float16 math runs in float32 and rounds back") {
  Tensor a = tensor({1.0, 2.5, -3.0}).to(kBFloat16);
  Tensor s = a + a;
  CHECK(s.scalar_type() == kBFloat16);
  check_values(s, {2, 5, -6});
  check_values(a.gt(0.0), {1, 1, 0});
  Tensor h = tensor({0.5, 4.0}).to(kFloat16);
  h.mul_(2.0);
  CHECK(h.scalar_type() == kFloat16);
  check_values(h, {1, 8});
  CHECK((a.to(kFloat16) * a).scalar_type() == kFloat32);  // mixed reduced types promote to float32
  CHECK(a.equal(tensor({1.0, 2.5, -3.0}).to(kBFloat16)));
}
