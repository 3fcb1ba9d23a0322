// The random ops of the Tensor API: bernoulli, multinomial, normal_, uniform_, exponential_,
// random_ and friends. Statistics are checked with fixed seeds and bounds far outside what
// the distributions allow (deterministic, so they cannot flake); determinism, generator
// state save/restore and the Philox stream's consumption are checked exactly.
#include <cmath>
#include <set>

#include "test_util.h"

using namespace gr;
using gr::test::values;

namespace {
double mean_of(const Tensor& t) { return t.to(kFloat64).mean().item<double>(); }
double var_of(const Tensor& t) { return t.to(kFloat64).var().item<double>(); }

// Pearson's chi-square of observed counts against expected probabilities.
double chi_square(const std::vector<int64_t>& counts, const std::vector<double>& p) {
  double n = 0, chi = 0;
  for (int64_t c : counts) n += static_cast<double>(c);
  for (size_t i = 0; i < counts.size(); ++i) {
    const double e = n * p[i];
    chi += (static_cast<double>(counts[i]) - e) * (static_cast<double>(counts[i]) - e) / e;
  }
  return chi;
}
bool all_true(const Tensor& flags) { return flags.to(kInt64).sum().item<int64_t>() == flags.numel(); }
std::vector<int64_t> histogram(const Tensor& samples, int64_t categories) {
  std::vector<int64_t> counts(static_cast<size_t>(categories), 0);
  for (double v : values(samples)) ++counts.at(static_cast<size_t>(v));
  return counts;
}
}  // namespace

TEST_CASE("in-place fills: moments and ranges of each distribution") {
  Generator g(2024);
  const int64_t n = 200000;
  Tensor u = empty({n}, kFloat64);
  u.uniform_(2, 5, &g);
  CHECK(u.min().item<double>() >= 2);
  CHECK(u.max().item<double>() < 5);
  CHECK(mean_of(u) == doctest::Approx(3.5).epsilon(0.005));
  CHECK(var_of(u) == doctest::Approx(0.75).epsilon(0.02));

  Tensor z = empty({n}, kFloat32);
  z.normal_(3, 2, &g);
  CHECK(mean_of(z) == doctest::Approx(3).epsilon(0.01));
  CHECK(var_of(z) == doctest::Approx(4).epsilon(0.02));

  Tensor e = empty({n}, kFloat64);
  e.exponential_(4, &g);
  CHECK(e.min().item<double>() >= 0);
  CHECK(mean_of(e) == doctest::Approx(0.25).epsilon(0.02));
  CHECK(var_of(e) == doctest::Approx(1.0 / 16).epsilon(0.05));

  Tensor ln = empty({n}, kFloat64);
  ln.log_normal_(0, 0.5, &g);
  CHECK(ln.min().item<double>() > 0);
  CHECK(mean_of(ln) == doctest::Approx(std::exp(0.125)).epsilon(0.01));

  Tensor c = empty({n}, kFloat32);
  c.cauchy_(1.5, 2, &g);
  CHECK(mean_of(lt(c, full({}, 1.5)).to(kFloat64)) == doctest::Approx(0.5).epsilon(0.02));
  CHECK(mean_of(lt(c, full({}, 3.5)).to(kFloat64)) == doctest::Approx(0.75).epsilon(0.02));  // median + sigma

  Tensor geo = empty({n}, kFloat32);
  geo.geometric_(0.25, &g);
  CHECK(geo.min().item<double>() == 1);
  CHECK(mean_of(geo) == doctest::Approx(4).epsilon(0.02));
  CHECK(eq(geo, geo.to(kInt64).to(kFloat32)).to(kInt64).sum().item<int64_t>() == n);  // whole numbers

  Tensor b = empty({n}, kFloat32);
  b.bernoulli_(0.3, &g);
  CHECK(mean_of(b) == doctest::Approx(0.3).epsilon(0.02));
  CHECK(eq(b, zeros({})).to(kInt64).sum().item<int64_t>() + eq(b, ones({})).to(kInt64).sum().item<int64_t>() == n);
}

TEST_CASE("random_: integers in [from, to), [0, to) or the dtype's default range") {
  Generator g(5);
  Tensor a = empty({20000}, kInt32);
  a.random_(3, 9, &g);
  CHECK(a.min().item<int64_t>() == 3);
  CHECK(a.max().item<int64_t>() == 8);
  Tensor b = empty({20000}, kInt8);
  b.random_(-128, 128, &g);
  CHECK(b.min().item<int64_t>() == -128);
  CHECK(b.max().item<int64_t>() == 127);
  Tensor c = empty({20000}, kUInt8);
  c.random_(&g);
  CHECK(c.min().item<int64_t>() == 0);
  CHECK(c.max().item<int64_t>() == 255);
  Tensor f = empty({20000}, kFloat32);
  f.random_(10, &g);
  CHECK(f.max().item<double>() == 9);
  CHECK(all_true(eq(f, f.to(kInt64).to(kFloat32))));
  Tensor big = empty({20000}, kFloat32);
  big.random_(&g);
  CHECK(big.max().item<double>() <= 16777216.0);
  CHECK(big.max().item<double>() > 1e6);
  Tensor flags = empty({100}, kBool);
  flags.random_(&g);
  CHECK(flags.to(kInt64).sum().item<int64_t>() > 20);
  CHECK(flags.to(kInt64).sum().item<int64_t>() < 80);
  Tensor s = empty({1000}, kInt16);
  s.random_(30000, std::nullopt, &g);
  CHECK(s.min().item<int64_t>() >= 30000);
  CHECK_THROWS_WITH_AS(a.random_(5, 5, &g), doctest::Contains("random_: expects 'from' to be less than 'to'"),
                       gr::Error);
  CHECK_THROWS_WITH_AS(b.random_(0, 300, &g), doctest::Contains("does not fit dtype int8"), gr::Error);
  CHECK_THROWS_WITH_AS(f.random_(0, int64_t{1} << 30, &g), doctest::Contains("the integers it holds exactly"),
                       gr::Error);
}

TEST_CASE("bernoulli: scalar p, tensor p (broadcast), out of place, any output dtype") {
  Generator g(7);
  Tensor p = tensor({0.0, 1.0, 0.5, 0.0}, kFloat64);
  Tensor draws = bernoulli(p.expand({50000, 4}).contiguous(), &g);
  CHECK(draws.scalar_type() == kFloat64);
  Tensor m = draws.mean({0});
  CHECK(m[0].item<double>() == 0);
  CHECK(m[1].item<double>() == 1);
  CHECK(m[2].item<double>() == doctest::Approx(0.5).epsilon(0.02));
  Tensor flags = zeros({50000, 4}, kBool);
  flags.bernoulli_(p, &g);  // p broadcasts to self
  CHECK(flags.to(kInt64).sum({0})[1].item<int64_t>() == 50000);
  CHECK(flags.to(kInt64).sum({0})[3].item<int64_t>() == 0);
  Tensor i = zeros({1000}, kInt16);
  i.bernoulli_(1.0, &g);
  CHECK(i.to(kInt64).sum().item<int64_t>() == 1000);
  CHECK(zeros({3}).bernoulli(0.0, &g).sum().item<double>() == 0);
  CHECK(full({3}, 1.0).bernoulli(&g).sum().item<double>() == 3);
  CHECK_THROWS_WITH_AS(zeros({2}).bernoulli_(1.5), doctest::Contains("bernoulli_: expects p to be in [0, 1]"),
                       gr::Error);
  CHECK_THROWS_WITH_AS(bernoulli(tensor({0.5, 2.0})), doctest::Contains("probabilities in [0, 1]"), gr::Error);
  CHECK_THROWS_WITH_AS(zeros({2}).bernoulli_(full({3}, 0.5)), doctest::Contains("bernoulli_: shapes [2] and [3]"),
                       gr::Error);
  CHECK_THROWS_WITH_AS(zeros({3}).bernoulli_(full({2, 3}, 0.5)), doctest::Contains("does not broadcast"), gr::Error);
  CHECK_THROWS_WITH_AS(bernoulli(tensor({0, 1})), doctest::Contains("floating point probability tensor"), gr::Error);
}

TEST_CASE("multinomial with replacement: frequencies pass a chi-square test, zero weights never drawn") {
  Generator g(11);
  Tensor w = tensor({2.0, 0.0, 5.0, 3.0});  // unnormalised
  Tensor s = multinomial(w, 60000, true, &g);
  CHECK(s.scalar_type() == kInt64);
  CHECK(s.sizes() == IntArrayRef{60000});
  std::vector<int64_t> counts = histogram(s, 4);
  CHECK(counts[1] == 0);
  // 2 degrees of freedom (the zero category left out): P(chi2 > 41.4) = 1e-9.
  CHECK(chi_square({counts[0], counts[2], counts[3]}, {0.2, 0.5, 0.3}) < 41.4);
  // Rows of a 2-D tensor are separate distributions.
  Tensor rows = tensor({{0.0, 0.0, 1.0}, {1.0, 0.0, 0.0}, {0.0, 3.0, 1.0}}, kFloat64);
  Tensor r = rows.multinomial(1000, true, &g);
  CHECK(r.sizes() == IntArrayRef{3, 1000});
  CHECK(all_true(eq(r[0], full({}, 2, kInt64))));
  CHECK(all_true(eq(r[1], full({}, 0, kInt64))));
  CHECK(all_true(ne(r[2], full({}, 0, kInt64))));
}

TEST_CASE("multinomial without replacement never repeats and follows the weights") {
  Generator g(13);
  Tensor w = tensor({1.0, 2.0, 0.0, 4.0, 3.0});
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<double> s = values(multinomial(w, 4, false, &g));
    std::set<double> distinct(s.begin(), s.end());
    CHECK(distinct.size() == 4);
    CHECK(distinct.count(2) == 0);  // the zero weight is never among 4 picks from 4 positive ones
  }
  // The first pick is a draw from the normalised weights.
  Tensor batch = w.expand({30000, 5}).contiguous().multinomial(1, false, &g);
  std::vector<int64_t> counts = histogram(batch, 5);
  CHECK(counts[2] == 0);
  CHECK(chi_square({counts[0], counts[1], counts[3], counts[4]}, {0.1, 0.2, 0.4, 0.3}) < 45.0);  // 3 dof, 1e-9
  // All categories: a permutation of the positive ones, per row.
  Tensor perm = ones({3, 50}).multinomial(50, false, &g);
  for (int64_t r = 0; r < 3; ++r) {
    std::vector<double> v = values(perm[r]);
    std::sort(v.begin(), v.end());
    for (int64_t i = 0; i < 50; ++i) CHECK(v[i] == i);
  }
  CHECK_THROWS_WITH_AS(multinomial(w, 5, false), doctest::Contains("not enough non-negative category"), gr::Error);
  CHECK_THROWS_WITH_AS(multinomial(w, 6, false), doctest::Contains("cannot sample n_sample (6) > prob_dist.size(-1) (5)"),
                       gr::Error);
}

TEST_CASE("multinomial argument errors name the problem") {
  CHECK_THROWS_WITH_AS(multinomial(tensor({1.0, -1.0}), 1, true), doctest::Contains("element < 0"), gr::Error);
  CHECK_THROWS_WITH_AS(multinomial(tensor({1.0, std::nan("")}), 1, true), doctest::Contains("inf, nan"), gr::Error);
  CHECK_THROWS_WITH_AS(multinomial(tensor({1.0, INFINITY}), 1, true), doctest::Contains("inf, nan"), gr::Error);
  CHECK_THROWS_WITH_AS(multinomial(tensor({{1.0, 1.0}, {0.0, 0.0}}), 1, true),
                       doctest::Contains("sum of probabilities <= 0"), gr::Error);
  CHECK_THROWS_WITH_AS(multinomial(ones({2, 2, 2}), 1, true), doctest::Contains("must be 1 or 2 dim"), gr::Error);
  CHECK_THROWS_WITH_AS(multinomial(ones({3}), 0, true), doctest::Contains("cannot sample 0"), gr::Error);
  CHECK_THROWS_WITH_AS(multinomial(tensor({1, 2}), 1, true), doctest::Contains("floating point"), gr::Error);
}

TEST_CASE("normal with tensor means and standard deviations, and normal(mean, std, size)") {
  Generator g(17);
  Tensor mean = tensor({-10.0, 0.0, 10.0}, kFloat64).expand({40000, 3}).contiguous();
  Tensor a = normal(mean, 0.5, &g);
  CHECK(a.scalar_type() == kFloat64);
  Tensor m = a.mean({0});
  CHECK(m[0].item<double>() == doctest::Approx(-10).epsilon(0.002));
  CHECK(m[2].item<double>() == doctest::Approx(10).epsilon(0.002));
  Tensor stds = tensor({0.0, 1.0, 3.0}, kFloat64);
  Tensor b = normal(2.0, stds.expand({40000, 3}).contiguous(), &g);
  CHECK(b.select(1, 0).min().item<double>() == 2.0);
  CHECK(b.select(1, 0).max().item<double>() == 2.0);
  CHECK(var_of(b.select(1, 2)) == doctest::Approx(9).epsilon(0.03));
  Tensor c = normal(tensor({1.0, 2.0}), tensor({{0.0}, {1.0}}), &g);  // broadcast: [2, 2]
  CHECK(c.sizes() == IntArrayRef{2, 2});
  CHECK(c[0].equal(tensor({1.0f, 2.0f})));
  Tensor d = normal(5.0, 2.0, {100000}, &g, kFloat64);
  CHECK(mean_of(d) == doctest::Approx(5).epsilon(0.01));
  CHECK(var_of(d) == doctest::Approx(4).epsilon(0.02));
  CHECK_THROWS_WITH_AS(normal(1.0, -1.0, {2}), doctest::Contains("std >= 0.0"), gr::Error);
  CHECK_THROWS_WITH_AS(normal(zeros({2}), -1.0), doctest::Contains("std >= 0.0"), gr::Error);
}

TEST_CASE("random ops are deterministic per seed and replay after restoring the generator state") {
  auto draw_all = [](Generator& g) {
    Tensor x = empty({37}, kFloat32), y = empty({11}, kFloat64), k = empty({9}, kInt32);
    x.normal_(0, 1, &g);
    y.exponential_(2, &g);
    k.random_(0, 1000, &g);
    Tensor b = bernoulli(full({13}, 0.4), &g);
    Tensor m = multinomial(tensor({1.0, 2.0, 3.0}), 20, true, &g);
    Tensor w = multinomial(tensor({1.0, 2.0, 3.0, 4.0}), 3, false, &g);
    return TensorList{x, y, k, b, m, w};
  };
  Generator g1(99), g2(99);
  TensorList a = draw_all(g1), b = draw_all(g2);
  for (size_t i = 0; i < a.size(); ++i) CHECK(a[i].equal(b[i]));
  GeneratorState saved = g1.state();
  TensorList c = draw_all(g1);
  g1.set_state(saved);
  TensorList d = draw_all(g1);
  for (size_t i = 0; i < c.size(); ++i) CHECK(c[i].equal(d[i]));
  CHECK_FALSE(c[0].equal(a[0]));  // the stream moved on
  // The default generator, through manual_seed.
  manual_seed(3);
  Tensor e = empty({5}).uniform_();
  manual_seed(3);
  CHECK(empty({5}).uniform_().equal(e));
}

TEST_CASE("each fill reserves ceil(n / per_block) Philox blocks (Note [Random streams])") {
  Generator g(1);
  auto used = [&g](auto&& fill) {
    const uint64_t before = g.state().offset;
    fill();
    return g.state().offset - before;
  };
  CHECK(used([&] { empty({10}, kFloat32).normal_(0, 1, &g); }) == 3);   // 4 per block
  CHECK(used([&] { empty({10}, kFloat64).normal_(0, 1, &g); }) == 5);   // 2 per block
  CHECK(used([&] { empty({10}, kFloat64).bernoulli_(0.5, &g); }) == 3);  // 24-bit uniforms
  CHECK(used([&] { empty({10}, kInt64).random_(0, 5, &g); }) == 5);      // 64-bit integers
  CHECK(used([&] { empty({0}).uniform_(0, 1, &g); }) == 0);
}

TEST_CASE("a fill of a non-contiguous view draws the values a contiguous tensor of its shape gets") {
  Generator g1(21), g2(21);
  Tensor base = zeros({4, 6});
  Tensor view = base.t();  // [6, 4], strided
  view.normal_(0, 1, &g1);
  Tensor contiguous = empty({6, 4});
  contiguous.normal_(0, 1, &g2);
  CHECK(view.equal(contiguous));
  Tensor narrow = zeros({10}).slice(0, 0, 10, 2);
  narrow.uniform_(1, 2, &g1);
  CHECK(narrow.min().item<double>() >= 1);
}

TEST_CASE("random fills of reduced floats and under autograd") {
  Generator g(4);
  Tensor h = empty({1000}, kBFloat16);
  h.normal_(0, 1, &g);
  CHECK(std::abs(mean_of(h)) < 0.2);
  const Tensor p = zeros({3}, TensorOptions().requires_grad(true));
  CHECK_THROWS_WITH_AS(p.normal_(), doctest::Contains("normal_: a leaf Variable that requires grad"), gr::Error);
  {
    NoGradGuard no_grad;
    p.uniform_(-1, 1, &g);  // initialisation
  }
  CHECK(p.abs().max().item<double>() <= 1);
  // A fill of a non-leaf cuts the gradient to its history.
  Tensor y = p * 2;
  y.exponential_(1, &g);
  (y.sum() + p.sum()).backward();
  CHECK(p.grad().equal(ones({3})));
  CHECK_THROWS_WITH_AS(zeros({2}, kInt64).normal_(), doctest::Contains("normal_: expected a floating point tensor"),
                       gr::Error);
  CHECK_THROWS_WITH_AS(zeros({2}).uniform_(3, 1), doctest::Contains("from=3 > to=1"), gr::Error);
  CHECK_THROWS_WITH_AS(zeros({2}).exponential_(0), doctest::Contains("lambda > 0.0"), gr::Error);
  CHECK_THROWS_WITH_AS(zeros({2}).geometric_(1.0), doctest::Contains("p to be in (0, 1)"), gr::Error);
}
