// Random tensors: reproducible per seed, independent of thread count, right statistics; the
// integer route of native::random_.
#include <gradring/core/native/random.h>

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

// Issue 32: the CUDA parity test fills integers through native::random_(RandomKind::Integer),
// which refused every device ("integer fills go through random_integers_"); random_ now routes
// them there. Same numbers as random_integers_ and randint from the same generator state.
TEST_CASE("random_ with RandomKind::Integer draws random_integers_'s numbers") {
  for (ScalarType t : {kInt64, kUInt8, kFloat32}) {
    for (int64_t n : {1, 5, 4097}) {
      CAPTURE(t);
      CAPTURE(n);
      Generator g1(20240607), g2(20240607);
      g1.reserve(3);
      g2.reserve(3);
      Tensor via_kind = empty({n}, TensorOptions(t)), direct = empty({n}, TensorOptions(t));
      native::random_(via_kind, native::RandomKind::Integer, -7, 200, &g1);
      native::random_integers_(direct, -7, 207, &g2);
      CHECK(via_kind.equal(direct));
      CHECK(g1.state().offset == g2.state().offset);  // the same blocks reserved
    }
  }
  Generator g1(5), g2(5);
  Tensor a = empty({999}, TensorOptions(kInt64));
  native::random_(a, native::RandomKind::Integer, 0, 10, &g1);
  CHECK(a.equal(randint(0, 10, {999}, kInt64, &g2)));
  CHECK(a.min().item<int64_t>() >= 0);
  CHECK(a.max().item<int64_t>() <= 9);
  // Bounds a double cannot carry exactly, or an empty range, are refused with the bounds.
  CHECK_THROWS_WITH_AS(native::random_(a, native::RandomKind::Integer, 0.5, 10, &g1),
                       doctest::Contains("integer bounds low < high"), gr::Error);
  CHECK_THROWS_AS(native::random_(a, native::RandomKind::Integer, 3, 3, &g1), gr::Error);
  CHECK_THROWS_AS(native::random_(a, native::RandomKind::Integer, 0, 1e17, &g1), gr::Error);
  CHECK_THROWS_AS(native::random_(a, native::RandomKind::Integer, 0, NAN, &g1), gr::Error);
}
