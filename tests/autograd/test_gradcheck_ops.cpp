// float64 gradcheck of the element-wise, reduction, view, matmul, cat/stack and softmax
// ops, with broadcasting and non-contiguous inputs.
#include "test_util.h"

using namespace gr;
using autograd::gradcheck;

namespace {
Tensor r(std::vector<int64_t> shape, uint64_t seed) {
  Generator g(seed);
  return randn(shape, TensorOptions(kFloat64), &g).requires_grad_(true);
}
// Positive values away from 0 for log/sqrt/div/pow.
Tensor pos(std::vector<int64_t> shape, uint64_t seed) {
  Generator g(seed);
  return (rand(shape, TensorOptions(kFloat64), &g) + 0.5).detach().requires_grad_(true);
}
// A leaf whose memory is transposed (non-contiguous).
Tensor strided(int64_t rows, int64_t cols, uint64_t seed) {
  Generator g(seed);
  return randn({cols, rows}, TensorOptions(kFloat64), &g).t().detach().requires_grad_(true);
}
using F = std::function<Tensor(const TensorList&)>;
}  // namespace

TEST_CASE("gradcheck: arithmetic with broadcasting") {
  Tensor a = r({2, 3}, 1), b = r({3}, 2), c = r({2, 1}, 3), p = pos({2, 3}, 4), q = pos({3}, 5);
  CHECK(gradcheck([](const TensorList& t) { return add(t[0], t[1], 0.7); }, {a, b}));
  CHECK(gradcheck([](const TensorList& t) { return sub(t[0], t[1], 1.5); }, {a, c}));
  CHECK(gradcheck([](const TensorList& t) { return t[0] * t[1]; }, {a, c}));
  CHECK(gradcheck([](const TensorList& t) { return t[0] / t[1]; }, {a, q}));
  CHECK(gradcheck([](const TensorList& t) { return 2.0 - t[0] * 3.0 + t[0] / 4.0 + 1.0; }, {a}));
  CHECK(gradcheck([](const TensorList& t) { return -t[0]; }, {a}));
  CHECK(gradcheck([](const TensorList& t) { return t[0] * t[0]; }, {a}));  // same tensor twice
  CHECK(gradcheck([](const TensorList& t) { return t[0] * t[1]; }, {strided(2, 3, 6), b}));
  CHECK(gradcheck([](const TensorList& t) { return t[0] / t[1]; }, {p, strided(2, 3, 7)}));
}

TEST_CASE("gradcheck: unary math and activations") {
  Tensor a = r({3, 4}, 10), p = pos({3, 4}, 11);
  CHECK(gradcheck([](const TensorList& t) { return exp(t[0]); }, {a}));
  CHECK(gradcheck([](const TensorList& t) { return log(t[0]); }, {p}));
  CHECK(gradcheck([](const TensorList& t) { return sqrt(t[0]); }, {p}));
  CHECK(gradcheck([](const TensorList& t) { return abs(t[0]); }, {a}));
  CHECK(gradcheck([](const TensorList& t) { return relu(t[0]); }, {a}));
  CHECK(gradcheck([](const TensorList& t) { return sigmoid(t[0]); }, {a}));
  CHECK(gradcheck([](const TensorList& t) { return tanh(t[0]); }, {a}));
  CHECK(gradcheck([](const TensorList& t) { return t[0].pow(3.0); }, {a}));
  CHECK(gradcheck([](const TensorList& t) { return t[0].pow(-1.5); }, {p}));
  CHECK(gradcheck([](const TensorList& t) { return t[0].pow(0.0); }, {p}));
  CHECK(gradcheck([](const TensorList& t) { return pow(t[0], t[1]); }, {p, r({4}, 12)}));
  CHECK(gradcheck([](const TensorList& t) { return exp(t[0]); }, {strided(3, 4, 13)}));
  CHECK(gradcheck([](const TensorList& t) { return tanh(t[0]) * sigmoid(t[0]); }, {strided(4, 3, 14)}));
}

TEST_CASE("gradcheck: where, maximum, minimum") {
  Tensor a = r({2, 3}, 20), b = r({3}, 21);
  Tensor cond = a.detach().gt(0.0);
  CHECK(gradcheck([cond](const TensorList& t) { return where(cond, t[0], t[1]); }, {a, b}));
  CHECK(gradcheck([](const TensorList& t) { return maximum(t[0], t[1]); }, {a, b}));
  CHECK(gradcheck([](const TensorList& t) { return minimum(t[0], t[1]); }, {a, b}));
}

TEST_CASE("gradcheck: reductions over dims, with keepdim") {
  Tensor a = r({2, 3, 4}, 30);
  CHECK(gradcheck([](const TensorList& t) { return t[0].sum(); }, {a}));
  CHECK(gradcheck([](const TensorList& t) { return t[0].sum({1}); }, {a}));
  CHECK(gradcheck([](const TensorList& t) { return t[0].sum({0, 2}, true); }, {a}));
  CHECK(gradcheck([](const TensorList& t) { return t[0].mean(); }, {a}));
  CHECK(gradcheck([](const TensorList& t) { return t[0].mean({-1}, true); }, {a}));
  CHECK(gradcheck([](const TensorList& t) { return t[0].var(); }, {a}));
  CHECK(gradcheck([](const TensorList& t) { return t[0].var({0, 2}, false, true); }, {a}));
  CHECK(gradcheck([](const TensorList& t) { return t[0].var({1}); }, {a}));
  CHECK(gradcheck([](const TensorList& t) { return t[0].max(); }, {a}));
  CHECK(gradcheck([](const TensorList& t) { return t[0].min(); }, {a}));
  CHECK(gradcheck([](const TensorList& t) { return std::get<0>(t[0].max(1)); }, {a}));
  CHECK(gradcheck([](const TensorList& t) { return std::get<0>(t[0].min(2, true)); }, {a}));
  CHECK(gradcheck([](const TensorList& t) { return t[0].sum({0}); }, {strided(3, 5, 31)}));
  CHECK(gradcheck([](const TensorList& t) { return std::get<0>(t[0].max(0)); }, {strided(3, 5, 32)}));
}

TEST_CASE("gradcheck: views") {
  Tensor a = r({2, 3, 4}, 40);
  CHECK(gradcheck([](const TensorList& t) { return t[0].view({6, 4}) * 2.0; }, {a}));
  CHECK(gradcheck([](const TensorList& t) { return t[0].reshape({4, 6}); }, {a}));
  CHECK(gradcheck([](const TensorList& t) { return t[0].permute({2, 0, 1}); }, {a}));
  CHECK(gradcheck([](const TensorList& t) { return t[0].transpose(0, 2).reshape({-1}); }, {a}));
  CHECK(gradcheck([](const TensorList& t) { return t[0].narrow(2, 1, 2); }, {a}));
  CHECK(gradcheck([](const TensorList& t) { return t[0].slice(1, 0, 3, 2); }, {a}));
  CHECK(gradcheck([](const TensorList& t) { return t[0].select(1, -1); }, {a}));
  CHECK(gradcheck([](const TensorList& t) { return t[0].unsqueeze(1).expand({2, 5, 3, 4}); }, {a}));
  CHECK(gradcheck([](const TensorList& t) { return t[0].unsqueeze(0).squeeze(); }, {a}));
  CHECK(gradcheck([](const TensorList& t) { return t[0].flatten(1); }, {a}));
  CHECK(gradcheck([](const TensorList& t) { return t[0].t().contiguous(); }, {strided(3, 2, 41)}));
  CHECK(gradcheck([](const TensorList& t) { return t[0].reshape({6}); }, {strided(3, 2, 42)}));
  CHECK(gradcheck([](const TensorList& t) { return t[0].clone() * t[0].to(kFloat64); }, {a}));
}

TEST_CASE("gradcheck: matmul in all its shapes, mm, bmm, linear") {
  CHECK(gradcheck([](const TensorList& t) { return matmul(t[0], t[1]); }, {r({3, 4}, 50), r({4, 2}, 51)}));
  CHECK(gradcheck([](const TensorList& t) { return matmul(t[0], t[1]); }, {r({4}, 52), r({4}, 53)}));
  CHECK(gradcheck([](const TensorList& t) { return matmul(t[0], t[1]); }, {r({3, 4}, 54), r({4}, 55)}));
  CHECK(gradcheck([](const TensorList& t) { return matmul(t[0], t[1]); }, {r({4}, 56), r({4, 2}, 57)}));
  CHECK(gradcheck([](const TensorList& t) { return matmul(t[0], t[1]); }, {r({2, 3, 4}, 58), r({4, 2}, 59)}));
  CHECK(gradcheck([](const TensorList& t) { return matmul(t[0], t[1]); }, {r({2, 1, 3, 4}, 60), r({3, 4, 2}, 61)}));
  CHECK(gradcheck([](const TensorList& t) { return matmul(t[0], t[1]); }, {r({3, 4}, 62), r({2, 4, 2}, 63)}));
  CHECK(gradcheck([](const TensorList& t) { return matmul(t[0], t[1]); }, {r({4}, 64), r({2, 4, 3}, 65)}));
  CHECK(gradcheck([](const TensorList& t) { return matmul(t[0], t[1]); }, {strided(3, 4, 66), strided(4, 2, 67)}));
  CHECK(gradcheck([](const TensorList& t) { return mm(t[0], t[1].t()); }, {r({3, 4}, 68), r({2, 4}, 69)}));
  CHECK(gradcheck([](const TensorList& t) { return bmm(t[0], t[1]); }, {r({2, 3, 4}, 70), r({2, 4, 2}, 71)}));
  CHECK(gradcheck([](const TensorList& t) { return linear(t[0], t[1], t[2]); }, {r({5, 4}, 72), r({3, 4}, 73), r({3}, 74)}));
  CHECK(gradcheck([](const TensorList& t) { return linear(t[0], t[1]); }, {r({2, 5, 4}, 75), r({3, 4}, 76)}));
}

TEST_CASE("gradcheck: cat, stack, softmax, log_softmax") {
  Tensor a = r({2, 3}, 80), b = r({2, 2}, 81), c = r({2, 3}, 82);
  CHECK(gradcheck([](const TensorList& t) { return cat({t[0], t[1]}, 1); }, {a, b}));
  CHECK(gradcheck([](const TensorList& t) { return stack({t[0], t[1]}, 1); }, {a, c}));
  Tensor x = r({3, 4, 2}, 83);
  CHECK(gradcheck([](const TensorList& t) { return log_softmax(t[0], 1); }, {x}));
  CHECK(gradcheck([](const TensorList& t) { return log_softmax(t[0], -1); }, {x}));
  CHECK(gradcheck([](const TensorList& t) { return softmax(t[0], 0); }, {x}));
  CHECK(gradcheck([](const TensorList& t) { return softmax(t[0], 1); }, {strided(3, 4, 84)}));
}

TEST_CASE("gradcheck catches a wrong gradient") {
  // y = 2x recorded with a backward that claims 3: gradcheck must report the mismatch.
  auto wrong = [](const TensorList& t) {
    Tensor out = (t[0] * 2.0).detach();
    if (autograd::needs_grad(t[0]))
      autograd::record("WrongBackward", {t[0]}, {out}, [](const TensorList& g, const std::vector<bool>&) {
        return TensorList{g[0] * 3.0};
      });
    return out;
  };
  Tensor x = tensor({1.0, 2.0}, TensorOptions(kFloat64).requires_grad(true));
  autograd::GradcheckOptions o;
  o.raise_exception = false;
  CHECK_FALSE(gradcheck(wrong, {x}, o));
  CHECK_THROWS_WITH_AS(gradcheck(wrong, {x}), doctest::Contains("mismatch"), gr::Error);
  CHECK_THROWS_WITH_AS(gradcheck([](const TensorList& t) { return t[0] * 2.0; }, {tensor({1.0}).requires_grad_()}),
                       doctest::Contains("float64"), gr::Error);
}
