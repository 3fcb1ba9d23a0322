// dropout: mask determinism (seed + offset only, not threads or dtype), keep rate, scaling,
// the p = 0 / p = 1 / eval cases, gradcheck with a fixed mask, and errors.
#include "test_util.h"

#include <cmath>
#include <gradring/core/native/dropout.h>
#include <gradring/core/philox.h>
#include <vector>

using namespace gr;
using gr::test::check_close;
using gr::test::check_values;
using gr::test::values;

namespace {

Tensor leaf(const Tensor& t) { return t.detach().requires_grad_(true); }

}  // namespace

TEST_CASE("dropout keeps 1-p of the elements and scales them by 1/(1-p)") {
  const int64_t n = 200000;
  Tensor x = ones({n}, kFloat64);
  for (double p : {0.1, 0.5, 0.9}) {
    CAPTURE(p);
    Generator gen(123);
    std::vector<double> y = values(dropout(x, p, true, &gen));
    int64_t kept = 0, wrong_scale = 0;
    for (double v : y) {
      if (v == 0.0) continue;
      ++kept;
      if (!(test::abs_diff(v, 1.0 / (1.0 - p)) <= 1e-12)) ++wrong_scale;  // NaN counts as wrong
    }
    CHECK(wrong_scale == 0);
    const double rate = static_cast<double>(kept) / n, sigma = std::sqrt(p * (1 - p) / n);
    CHECK(std::fabs(rate - (1 - p)) < 5 * sigma);
  }
}

TEST_CASE("dropout masks depend only on the generator's seed and offset") {
  Tensor x = randn({3, 5000}, kFloat64);  // big enough for several parallel chunks
  Generator a(7), b(7), c(8);
  Tensor ya = dropout(x, 0.3, true, &a), yb = dropout(x, 0.3, true, &b), yc = dropout(x, 0.3, true, &c);
  CHECK(ya.equal(yb));
  CHECK_FALSE(ya.equal(yc));
  // The generator advances: a second draw differs; restoring its state repeats it.
  GeneratorState s = a.state();
  Tensor second = dropout(x, 0.3, true, &a);
  CHECK_FALSE(second.equal(ya));
  a.set_state(s);
  CHECK(dropout(x, 0.3, true, &a).equal(second));
  // Same mask whatever the thread count, dtype or memory layout.
  const int threads = get_num_threads();
  set_num_threads(1);
  Generator d(7);
  Tensor single = dropout(x, 0.3, true, &d);
  set_num_threads(threads);
  CHECK(single.equal(ya));
  Generator e(7);
  Tensor y32 = dropout(x.to(kFloat32), 0.3, true, &e);
  CHECK(y32.ne(0.0).equal(ya.ne(0.0)));
  Tensor xt = x.t().contiguous().t();  // same values, transposed strides
  CHECK_FALSE(xt.is_contiguous());
  Generator f(7);
  CHECK(dropout(xt, 0.3, true, &f).equal(ya));
  // The default generator is used when none is given.
  manual_seed(99);
  Tensor d1 = dropout(x, 0.5);
  manual_seed(99);
  CHECK(dropout(x, 0.5).equal(d1));
}

TEST_CASE("dropout follows the documented Philox stream") {
  // Element i keeps when the top 24 bits of number i % 4 of Philox block offset + i / 4 are
  // below round((1 - p) * 2^24); the CUDA kernel must give the same mask.
  const int64_t n = 1003;  // not a multiple of the 64 elements a CPU lane group covers
  Generator gen(42);
  gen.set_state({42, 17});
  Tensor y = dropout(ones({n}, kFloat32), 0.35, true, &gen);
  CHECK(gen.state().offset == 17 + (n + 3) / 4);
  const uint32_t threshold = native::dropout_threshold(0.35);
  CHECK(threshold == 10905190);  // round(0.65 * 2^24)
  const float* p = y.data_ptr<float>();
  int64_t mismatches = 0;
  for (int64_t b = 0; b < (n + 3) / 4; ++b) {
    Philox4x32 rng(42, 0, 17 + static_cast<uint64_t>(b));
    uint32_t r[4];
    rng.next(r);
    for (int64_t k = 0; k < 4 && 4 * b + k < n; ++k)
      if ((p[4 * b + k] != 0.0f) != ((r[k] >> 8) < threshold)) ++mismatches;
  }
  CHECK(mismatches == 0);
  CHECK(native::dropout_threshold(0.0) == (1u << 24));
  CHECK(native::dropout_threshold(1.0) == 0u);
}

TEST_CASE("dropout with p = 0, p = 1 and in eval mode") {
  Tensor x = leaf(randn({4, 6}, kFloat64));
  CHECK(dropout(x, 0.5, false).is_same(x));
  CHECK(dropout(x, 0.0, true).is_same(x));
  Tensor z = dropout(x, 1.0, true);
  CHECK(z.equal(zeros({4, 6}, kFloat64)));
  z.sum().backward();
  CHECK(x.grad().equal(zeros({4, 6}, kFloat64)));
}

TEST_CASE("dropout backward multiplies by the saved mask") {
  Tensor x = leaf(randn({5, 7}, kFloat64));
  Generator gen(3);
  Tensor y = dropout(x, 0.25, true, &gen);
  Tensor g = randn({5, 7}, kFloat64);
  y.backward(g);
  std::vector<double> yv = values(y), xv = values(x), gv = values(g), grad = values(x.grad());
  for (size_t i = 0; i < yv.size(); ++i) {
    const bool kept = yv[i] != 0.0;
    CHECK(grad[i] == doctest::Approx(kept ? gv[i] / 0.75 : 0.0).epsilon(1e-15));
    if (kept) CHECK(yv[i] == doctest::Approx(xv[i] / 0.75).epsilon(1e-15));
  }
  for (double p : {0.2, 0.7}) {
    Tensor xs = leaf(randn({3, 4}, kFloat64));
    CHECK(autograd::gradcheck(
        [p](const TensorList& in) {
          Generator same(11);  // the same mask on every evaluation
          return dropout(in[0], p, true, &same);
        },
        {xs}));
  }
}

TEST_CASE("dropout argument errors") {
  Tensor x = randn({3}, kFloat64);
  CHECK_THROWS_WITH_AS(dropout(x, -0.1), doctest::Contains("between 0 and 1"), gr::Error);
  CHECK_THROWS_WITH_AS(dropout(x, 1.5), doctest::Contains("between 0 and 1"), gr::Error);
  CHECK_THROWS_AS(dropout(x, 1.5, false), gr::Error);
  CHECK_THROWS_WITH_AS(dropout(ones({3}, kInt64), 0.5), doctest::Contains("float"), gr::Error);
}
