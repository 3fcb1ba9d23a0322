// max_pool2d, avg_pool2d and adaptive_avg_pool2d: hand-computed values, torch's output
// shapes, gradcheck over parameter variants, and argument errors.
#include "test_util.h"

#include <cmath>
#include <gradring/core/native/pooling/pooling.h>
#include <limits>
#include <vector>

using namespace gr;
using gr::test::check_close;
using gr::test::check_values;
using gr::test::values;

namespace {

// float64 values that are all distinct (a shuffled ramp), so max windows have no ties.
Tensor distinct(std::vector<int64_t> shape, uint64_t seed) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  Generator gen(seed);
  return randperm(n, &gen).to(kFloat64).div(static_cast<double>(n)).reshape(shape);
}

Tensor leaf(const Tensor& t) { return t.detach().requires_grad_(true); }

}  // namespace

TEST_CASE("max_pool2d values and indices") {
  Tensor x = arange(16, kFloat64).reshape({1, 1, 4, 4});
  auto [out, idx] = max_pool2d_with_indices(x, {2});
  CHECK(out.sizes() == IntArrayRef({1, 1, 2, 2}));
  check_values(out, {5, 7, 13, 15});
  CHECK(idx.scalar_type() == kInt64);
  check_values(idx, {5, 7, 13, 15});
  // Padding: the corner window sees only x[0, 0]; indices stay within the unpadded plane.
  auto [po, pi] = max_pool2d_with_indices(x, {3}, {2}, {1});
  check_values(po, {5, 7, 13, 15});
  check_values(pi, {5, 7, 13, 15});
  // Dilation 2, kernel 2: taps (0,0) (0,2) (2,0) (2,2).
  check_values(max_pool2d(x, {2}, {1}, {0}, {2}), {10, 11, 14, 15});
  // Ties: the first maximum wins.
  auto [to, ti] = max_pool2d_with_indices(ones({1, 2, 2}, kFloat64), {2});
  check_values(ti, {0});
  // float32 agrees with float64.
  Tensor y = distinct({2, 3, 7, 6}, 1);
  check_values(max_pool2d(y.to(kFloat32), {3, 2}, {2, 1}, {1, 0}, {1, 2}, true),
             values(max_pool2d(y, {3, 2}, {2, 1}, {1, 0}, {1, 2}, true)), 1e-6);
}

TEST_CASE("max_pool2d NaN wins") {
  Tensor x = tensor({1.0, std::numeric_limits<double>::quiet_NaN(), 3.0, 2.0}, kFloat64).reshape({1, 1, 2, 2});
  auto [out, idx] = max_pool2d_with_indices(x, {2});
  CHECK(std::isnan(values(out)[0]));
  check_values(idx, {1});
}

TEST_CASE("pooling output shapes follow torch (ceil_mode)") {
  Tensor x = zeros({1, 1, 5, 5}, kFloat64);
  CHECK(max_pool2d(x, {3}, {2}, {1}, {2}, true).sizes() == IntArrayRef({1, 1, 2, 2}));
  CHECK(max_pool2d(x, {2}, {2}, {0}, {1}, true).sizes() == IntArrayRef({1, 1, 3, 3}));
  CHECK(max_pool2d(x, {2}, {2}, {0}, {1}, false).sizes() == IntArrayRef({1, 1, 2, 2}));
  // The last window may not start in the padding: 5 + 2*1 with k2 s2 would give 4 windows.
  CHECK(avg_pool2d(x, {2}, {2}, {1}, true).sizes() == IntArrayRef({1, 1, 3, 3}));
  CHECK(native::pool_output_size(6, 2, 2, 1, 1, true) == 4);
  CHECK(native::pool_output_size(5, 2, 2, 1, 1, true) == 3);
  CHECK(adaptive_avg_pool2d(zeros({3, 7, 5}, kFloat64), {3, 2}).sizes() == IntArrayRef({3, 3, 2}));
}

TEST_CASE("avg_pool2d values, count_include_pad and ceil_mode") {
  Tensor x = arange(16, kFloat64).reshape({1, 1, 4, 4});
  check_values(avg_pool2d(x, {2}), {2.5, 4.5, 10.5, 12.5});
  // Padding 1, kernel 2, stride 2: corner window holds x[0,0] and three pads.
  check_values(avg_pool2d(x, {2}, {2}, {1}, false, true).slice(2, 0, 1).slice(3, 0, 1), {0.0});
  check_values(avg_pool2d(x, {2}, {2}, {1}, false, true).slice(2, 0, 1).slice(3, 1, 2), {(1 + 2) / 4.0});
  check_values(avg_pool2d(x, {2}, {2}, {1}, false, false).slice(2, 0, 1).slice(3, 1, 2), {(1 + 2) / 2.0});
  // ceil_mode on 5x5, k2 s2: the last window is clipped to one column; the divisor counts
  // only the real elements (no padding exists beyond the input).
  Tensor y = arange(25, kFloat64).reshape({1, 5, 5});
  Tensor c = avg_pool2d(y, {2}, {2}, {0}, true, true);
  CHECK(c.sizes() == IntArrayRef({1, 3, 3}));
  check_values(c.slice(1, 0, 1).slice(2, 2, 3), {(4 + 9) / 2.0});
  check_values(c.slice(1, 2, 3).slice(2, 2, 3), {24.0});
}

TEST_CASE("adaptive_avg_pool2d uses torch's overlapping windows") {
  Tensor x = arange(5, kFloat64).reshape({1, 1, 1, 5});
  // 5 -> 3: windows [0,2) [1,4) [3,5).
  check_values(adaptive_avg_pool2d(x, {1, 3}), {0.5, 2.0, 3.5});
  Tensor y = arange(24, kFloat64).reshape({2, 3, 4});
  check_values(adaptive_avg_pool2d(y, {1}), {5.5, 17.5});
  check_values(adaptive_avg_pool2d(y, {3, 4}), values(y));
}

TEST_CASE("max_pool2d gradcheck") {
  struct Case {
    std::vector<int64_t> k, s, p, d;
    bool ceil;
  };
  const std::vector<Case> cases = {
      {{2}, {}, {0}, {1}, false},         {{3}, {2}, {1}, {1}, false},      {{3, 2}, {2, 1}, {1, 0}, {1, 2}, true},
      {{2}, {2}, {1}, {2}, true},         {{2, 3}, {1, 2}, {0, 1}, {2, 1}, false},
  };
  for (const Case& c : cases) {
    CAPTURE(c.k);
    CAPTURE(c.s);
    Tensor x = leaf(distinct({2, 2, 6, 5}, 7));
    CHECK(autograd::gradcheck(
        [&](const TensorList& in) { return max_pool2d(in[0], c.k, c.s, c.p, c.d, c.ceil); }, {x}));
  }
  // A non-contiguous input and a 3-D input.
  Tensor nc = leaf(distinct({2, 5, 6}, 3)).transpose(1, 2).detach().requires_grad_(true);
  CHECK_FALSE(nc.is_contiguous());
  CHECK(autograd::gradcheck([](const TensorList& in) { return max_pool2d(in[0], {2}, {1}); }, {nc}));
}

TEST_CASE("max_pool2d backward sends each gradient to its index") {
  Tensor x = leaf(distinct({1, 1, 4, 4}, 5));
  auto [out, idx] = max_pool2d_with_indices(x, {3}, {1});  // overlapping windows
  out.sum().backward();
  std::vector<double> g = values(x.grad());
  std::vector<double> expected(16, 0.0);
  for (double i : values(idx)) expected[static_cast<size_t>(i)] += 1;
  check_values(x.grad(), expected);
}

TEST_CASE("avg_pool2d gradcheck") {
  struct Case {
    std::vector<int64_t> k, s, p;
    bool ceil, include_pad;
  };
  const std::vector<Case> cases = {
      {{2}, {}, {0}, false, true},         {{3}, {2}, {1}, false, true},     {{3}, {2}, {1}, false, false},
      {{3, 2}, {2, 1}, {1, 1}, true, true}, {{3, 2}, {2, 1}, {1, 1}, true, false}, {{2}, {3}, {1}, true, false},
  };
  for (const Case& c : cases) {
    CAPTURE(c.k);
    CAPTURE(c.include_pad);
    Tensor x = leaf(randn({2, 2, 6, 5}, kFloat64));
    CHECK(autograd::gradcheck(
        [&](const TensorList& in) { return avg_pool2d(in[0], c.k, c.s, c.p, c.ceil, c.include_pad); }, {x}));
  }
  Tensor nc = leaf(randn({2, 2, 5, 6}, kFloat64)).transpose(2, 3).detach().requires_grad_(true);
  CHECK(autograd::gradcheck([](const TensorList& in) { return avg_pool2d(in[0], {2}, {1}, {1}); }, {nc}));
}

TEST_CASE("adaptive_avg_pool2d gradcheck") {
  for (std::vector<int64_t> size : {std::vector<int64_t>{1}, {3, 2}, {4, 5}, {7, 3}}) {
    CAPTURE(size);
    Tensor x = leaf(randn({2, 3, 5, 7}, kFloat64));
    CHECK(autograd::gradcheck([&](const TensorList& in) { return adaptive_avg_pool2d(in[0], size); }, {x}));
  }
  Tensor nc = leaf(randn({2, 7, 5}, kFloat64)).transpose(1, 2).detach().requires_grad_(true);
  CHECK(autograd::gradcheck([](const TensorList& in) { return adaptive_avg_pool2d(in[0], {3, 4}); }, {nc}));
  // The output size of the input (the copy path): 1x1 maps as at the end of ResNet-18, and 5x7.
  for (std::vector<int64_t> shape : {std::vector<int64_t>{3, 4, 1, 1}, {2, 3, 5, 7}}) {
    Tensor same = leaf(randn(shape, kFloat64));
    Tensor y = adaptive_avg_pool2d(same, {shape[2], shape[3]});
    check_close(y, same);
    CHECK(autograd::gradcheck([&](const TensorList& in) { return adaptive_avg_pool2d(in[0], {shape[2], shape[3]}); },
                              {same}));
  }
}

TEST_CASE("pooling backward in float32 matches float64") {
  Tensor x64 = leaf(distinct({2, 3, 9, 8}, 9)), x32 = leaf(x64.to(kFloat32));
  Tensor g = randn({2, 3, 5, 5}, kFloat64);
  for (int op = 0; op < 3; ++op) {
    CAPTURE(op);
    auto run = [&](const Tensor& x) {
      if (op == 0) return max_pool2d(x, {3}, {2}, {1}, {1}, true);
      if (op == 1) return avg_pool2d(x, {3}, {2}, {1}, true, false);
      return adaptive_avg_pool2d(x, {5, 5});
    };
    run(x64).backward(g);
    run(x32).backward(g.to(kFloat32));
    check_values(x32.grad(), values(x64.grad()), 1e-5);
    x64.mutable_grad() = Tensor();
    x32.mutable_grad() = Tensor();
  }
}

TEST_CASE("pooling argument errors") {
  Tensor x = zeros({1, 1, 4, 4});
  CHECK_THROWS_AS(max_pool2d(x, {0}), gr::Error);
  CHECK_THROWS_AS(max_pool2d(x, {2}, {0}), gr::Error);
  CHECK_THROWS_AS(max_pool2d(x, {2}, {1}, {0}, {0}), gr::Error);
  CHECK_THROWS_WITH_AS(max_pool2d(x, {2}, {1}, {2}), doctest::Contains("half the kernel"), gr::Error);
  CHECK_THROWS_AS(max_pool2d(x, {2}, {1}, {-1}), gr::Error);
  CHECK_THROWS_AS(max_pool2d(x, {2, 2, 2}), gr::Error);
  CHECK_THROWS_WITH_AS(max_pool2d(x, {5}), doctest::Contains("too small"), gr::Error);
  CHECK_THROWS_AS(max_pool2d(x, {3}, {1}, {0}, {2}), gr::Error);  // dilated kernel spans 5 > 4
  CHECK_THROWS_WITH_AS(max_pool2d(zeros({4, 4}), {2}), doctest::Contains("3-D"), gr::Error);
  CHECK_THROWS_WITH_AS(max_pool2d(zeros({1, 1, 4, 4}, kInt64), {2}), doctest::Contains("float"), gr::Error);
  CHECK_THROWS_AS(max_pool2d(zeros({1, 0, 4, 4}), {2}), gr::Error);
  CHECK_THROWS_AS(avg_pool2d(x, {2}, {1}, {2}), gr::Error);
  CHECK_THROWS_AS(avg_pool2d(zeros({2, 1, 1, 4, 4}), {2}), gr::Error);
  CHECK_THROWS_AS(adaptive_avg_pool2d(x, {-1}), gr::Error);
  CHECK_THROWS_AS(adaptive_avg_pool2d(x, {1, 2, 3}), gr::Error);
  CHECK_THROWS_AS(adaptive_avg_pool2d(zeros({4}), {1}), gr::Error);
}

TEST_CASE("max_pool2d 2x2 fast path agrees with the general kernel, ties and NaN included") {
  // Odd and even sizes, widths over 16 outputs, many ties (small integers) and a NaN.
  for (auto [h, w] : std::vector<std::pair<int64_t, int64_t>>{{26, 26}, {11, 11}, {4, 40}, {7, 3}}) {
    CAPTURE(h);
    CAPTURE(w);
    Generator g(static_cast<uint64_t>(h * 100 + w));
    Tensor x = randint(0, 3, {2, 3, h, w}, kInt64, &g).to(kFloat32);
    x.view({-1}).narrow(0, 5, 1).fill_(NAN);
    auto [fast_v, fast_i] = max_pool2d_with_indices(x, 2);  // stride 2, no padding: fast path
    // The reference: the general kernel, which float64 always takes.
    auto [ref_v, ref_i] = max_pool2d_with_indices(x.to(kFloat64), 2);
    CHECK(fast_i.equal(ref_i));
    // Backward: the fast path's single write pass against the general scatter.
    Tensor up = randn(fast_v.sizes(), kFloat32, &g);
    Tensor xf = x.clone().requires_grad_(true), xd = x.to(kFloat64).requires_grad_(true);
    max_pool2d(xf, 2).backward(up);
    max_pool2d(xd, 2).backward(up.to(kFloat64));
    CHECK(xf.grad().to(kFloat64).equal(xd.grad()));
    Tensor a = fast_v.to(kFloat64).contiguous(), b = ref_v.contiguous();
    for (int64_t k = 0; k < a.numel(); ++k) {
      double u = a.data_ptr<double>()[k], v = b.data_ptr<double>()[k];
      CHECK(((u == v) || (std::isnan(u) && std::isnan(v))));
    }
  }
}
