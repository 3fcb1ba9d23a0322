// nll_loss, cross_entropy and mse_loss: hand-computed values for every reduction, class
// weights and ignore_index, gradcheck, and argument errors.
#include "test_util.h"

#include <cmath>
#include <vector>

using namespace gr;
using gr::test::check_close;
using gr::test::check_values;
using gr::test::values;

namespace {

Tensor leaf(const Tensor& t) { return t.detach().requires_grad_(true); }

Tensor targets(std::vector<int64_t> v) { return tensor(v, kInt64); }

const Reduction kReductions[] = {Reduction::None, Reduction::Mean, Reduction::Sum};

}  // namespace

TEST_CASE("nll_loss values for every reduction, weight and ignore_index") {
  Tensor x = tensor({-1.0, -2.0, -3.0, -0.5, -1.5, -2.5}, kFloat64).reshape({2, 3});
  Tensor t = targets({2, 0});
  check_values(nll_loss(x, t, {}, Reduction::None), {3.0, 0.5});
  check_values(nll_loss(x, t, {}, Reduction::Sum), {3.5});
  check_values(nll_loss(x, t), {1.75});
  CHECK(nll_loss(x, t).dim() == 0);
  Tensor w = tensor({1.0, 2.0, 3.0}, kFloat64);
  check_values(nll_loss(x, t, w, Reduction::None), {9.0, 0.5});
  check_values(nll_loss(x, t, w, Reduction::Sum), {9.5});
  check_values(nll_loss(x, t, w, Reduction::Mean), {9.5 / 4.0});  // weighted mean: divided by sum of weights
  check_values(nll_loss(x, t, w, Reduction::None, 2), {0.0, 0.5});
  check_values(nll_loss(x, t, w, Reduction::Mean, 2), {0.5});
  check_values(nll_loss(x, targets({-100, 1})), {1.5});  // the default ignore_index
  // Everything ignored: the sum is 0, the mean 0/0 = NaN (as torch).
  check_values(nll_loss(x, targets({-100, -100}), {}, Reduction::Sum), {0.0});
  CHECK(std::isnan(nll_loss(x, targets({-100, -100})).item<double>()));
  // A single sample: [C] input, 0-d target.
  Tensor one = nll_loss(tensor({-1.0, -2.0, -3.0}, kFloat64), scalar_tensor(1, kInt64), {}, Reduction::None);
  CHECK(one.dim() == 0);
  check_values(one, {2.0});
  check_values(nll_loss(tensor({-1.0, -2.0, -3.0}, kFloat64), scalar_tensor(2, kInt64), w), {-3.0 * -3.0 / 3.0});
  // float32.
  check_values(nll_loss(x.to(kFloat32), t, w.to(kFloat32), Reduction::Mean), {9.5 / 4.0}, 1e-6);
}

TEST_CASE("nll_loss gradcheck") {
  Tensor x = leaf(randn({5, 4}, kFloat64));
  Tensor t = targets({3, 0, 2, 2, 1});
  Tensor w = rand({4}, kFloat64) + 0.5;
  for (Reduction r : kReductions) {
    for (int64_t ignore : {int64_t{-100}, int64_t{2}}) {
      CAPTURE(static_cast<int>(r));
      CAPTURE(ignore);
      CHECK(autograd::gradcheck([&](const TensorList& in) { return nll_loss(in[0], t, {}, r, ignore); }, {x}));
      CHECK(autograd::gradcheck([&](const TensorList& in) { return nll_loss(in[0], t, w, r, ignore); }, {x}));
    }
  }
  Tensor nc = leaf(randn({4, 5}, kFloat64)).t().detach().requires_grad_(true);
  CHECK(autograd::gradcheck([&](const TensorList& in) { return nll_loss(in[0], t, w); }, {nc}));
  Tensor single = leaf(randn({4}, kFloat64));
  CHECK(autograd::gradcheck([&](const TensorList& in) { return nll_loss(in[0], scalar_tensor(3, kInt64), w); },
                            {single}));
}

TEST_CASE("cross_entropy is nll_loss of log_softmax") {
  Tensor x = randn({3, 4}, kFloat64);
  Tensor t = targets({1, 3, 0});
  std::vector<double> xv = values(x), expected;
  for (int64_t i = 0; i < 3; ++i) {
    double lse = 0;
    for (int64_t c = 0; c < 4; ++c) lse += std::exp(xv[i * 4 + c]);
    expected.push_back(std::log(lse) - xv[i * 4 + values(t)[i]]);
  }
  check_values(cross_entropy(x, t, {}, Reduction::None), expected);
  check_values(cross_entropy(x, t), {(expected[0] + expected[1] + expected[2]) / 3});
  check_values(cross_entropy(x[1], t[1]), {expected[1]});
  Tensor xl = leaf(x), w = rand({4}, kFloat64) + 0.5;
  for (Reduction r : kReductions) {
    CAPTURE(static_cast<int>(r));
    CHECK(autograd::gradcheck([&](const TensorList& in) { return cross_entropy(in[0], t, w, r, 0); }, {xl}));
  }
  CHECK(autograd::gradcheck([&](const TensorList& in) { return cross_entropy(in[0], t[0]); }, {leaf(x[0])}));
}

TEST_CASE("mse_loss values and gradcheck") {
  Tensor x = tensor({1.0, 2.0, 4.0, -1.0}, kFloat64).reshape({2, 2});
  Tensor y = tensor({0.0, 2.0, 1.0, 1.0}, kFloat64).reshape({2, 2});
  check_values(mse_loss(x, y, Reduction::None), {1.0, 0.0, 9.0, 4.0});
  check_values(mse_loss(x, y, Reduction::Sum), {14.0});
  check_values(mse_loss(x, y), {3.5});
  Tensor a = leaf(randn({3, 4}, kFloat64)), b = leaf(randn({3, 4}, kFloat64));
  for (Reduction r : kReductions) {
    CAPTURE(static_cast<int>(r));
    CHECK(autograd::gradcheck([&](const TensorList& in) { return mse_loss(in[0], in[1], r); }, {a, b}));
  }
  Tensor nc = leaf(randn({4, 3}, kFloat64)).t().detach().requires_grad_(true);
  CHECK(autograd::gradcheck([&](const TensorList& in) { return mse_loss(in[0], in[1]); }, {nc, b}));
}

TEST_CASE("loss argument errors") {
  Tensor x = randn({3, 4}, kFloat64);
  CHECK_THROWS_WITH_AS(nll_loss(x, targets({0, 4, 1})), doctest::Contains("out of bounds"), gr::Error);
  CHECK_THROWS_WITH_AS(nll_loss(x, targets({0, -1, 1})), doctest::Contains("out of bounds"), gr::Error);
  CHECK_THROWS_WITH_AS(nll_loss(x, tensor({0.0, 1.0, 2.0}, kFloat64)), doctest::Contains("int64"), gr::Error);
  CHECK_THROWS_WITH_AS(nll_loss(x, targets({0, 1})), doctest::Contains("target of shape"), gr::Error);
  CHECK_THROWS_AS(nll_loss(x, targets({0, 1, 2}).reshape({3, 1})), gr::Error);
  CHECK_THROWS_AS(nll_loss(x, scalar_tensor(1, kInt64)), gr::Error);
  CHECK_THROWS_AS(nll_loss(x[0], targets({1})), gr::Error);
  CHECK_THROWS_WITH_AS(nll_loss(randn({2, 3, 4}, kFloat64), targets({0, 1})), doctest::Contains("[N, C]"), gr::Error);
  CHECK_THROWS_WITH_AS(nll_loss(x, targets({0, 1, 2}), ones({3}, kFloat64)), doctest::Contains("weight"), gr::Error);
  CHECK_THROWS_WITH_AS(nll_loss(x, targets({0, 1, 2}), ones({4}, kFloat32)), doctest::Contains("weight"), gr::Error);
  CHECK_THROWS_AS(nll_loss(ones({3, 4}, kInt64), targets({0, 1, 2})), gr::Error);
  CHECK_THROWS_AS(cross_entropy(randn({2, 3, 4}, kFloat64), targets({0, 1})), gr::Error);
  CHECK_THROWS_AS(cross_entropy(x, targets({0, 9, 1})), gr::Error);
  CHECK_THROWS_WITH_AS(mse_loss(x, randn({4, 3}, kFloat64)), doctest::Contains("same shape"), gr::Error);
  CHECK_THROWS_AS(mse_loss(x, randn({3, 4}, kFloat32)), gr::Error);
  CHECK_THROWS_AS(mse_loss(ones({2}, kInt64), ones({2}, kInt64)), gr::Error);
}
