// Random tensors: reproducible per seed, independent of thread count, right statistics.
#include "test_util.h"

using namespace gr;
using gr::test::values;

TEST_CASE("same seed, same numbers; different seeds differ") {
  Generator g1(42), g2(42), g3(43);
  Tensor a = randn({1000}, kFloat32, &g1), b = randn({1000}, kFloat32, &g2), c = randn({1000}, kFloat32, &g3);
  CHECK(a.equal(b));
  CHECK_FALSE(a.equal(c));
  // The stream advances: a second draw differs from the first.
  CHECK_FALSE(randn({1000}, kFloat32, &g1).equal(a));
}

TEST_CASE("generator state save and restore replays the stream") {
  Generator g(7);
  rand({10}, &g);
  GeneratorState s = g.state();
  Tensor x = rand({100}, &g);
  g.set_state(s);
  CHECK(rand({100}, &g).equal(x));
  manual_seed(5);
  Tensor y = randn({10});
  manual_seed(5);
  CHECK(randn({10}).equal(y));
}

TEST_CASE("results do not depend on the number of threads") {
  int before = get_num_threads();
  set_num_threads(1);
  Generator g1(3);
  Tensor one = randn({500000}, kFloat32, &g1);
  set_num_threads(2);
  Generator g2(3);
  Tensor two = randn({500000}, kFloat32, &g2);
  set_num_threads(before);
  CHECK(one.equal(two));
}

TEST_CASE("distributions have the right moments and ranges") {
  Generator g(11);
  Tensor n = randn({200000}, kFloat64, &g);
  CHECK(n.mean().item<double>() == doctest::Approx(0.0).scale(1).epsilon(0.01));
  CHECK(n.var().item<double>() == doctest::Approx(1.0).epsilon(0.02));
  Tensor u = rand({200000}, kFloat32, &g);
  CHECK(u.min().item<double>() >= 0.0);
  CHECK(u.max().item<double>() < 1.0);
  CHECK(u.mean().item<double>() == doctest::Approx(0.5).epsilon(0.01));
  Tensor k = randint(-3, 4, {100000}, kInt64, &g);
  CHECK(k.min().item<int64_t>() == -3);
  CHECK(k.max().item<int64_t>() == 3);
  Tensor p = randperm(50, &g);
  std::vector<double> v = values(p);
  std::sort(v.begin(), v.end());
  for (int i = 0; i < 50; ++i) CHECK(v[i] == i);
}
