// Views share storage with their base; contiguous/clone copy; reshape copies only when needed.
#include "test_util.h"

using namespace gr;
using gr::test::check_values;

TEST_CASE("view, reshape and flatten") {
  Tensor a = arange(12, kFloat32);
  Tensor v = a.view({3, 4});
  CHECK(v.storage().is_same(a.storage()));
  CHECK(v.sizes() == IntArrayRef({3, 4}));
  CHECK(a.view({2, -1}).sizes() == IntArrayRef({2, 6}));
  CHECK_THROWS_WITH_AS(a.view({5, -1}), doctest::Contains("invalid for input of size 12"), gr::Error);
  CHECK_THROWS_WITH_AS(a.view({-1, -1}), doctest::Contains("only one dimension can be inferred"), gr::Error);
  // A transposed matrix cannot be viewed flat, but can be reshaped (with a copy).
  Tensor t = v.t();
  CHECK_FALSE(t.is_contiguous());
  CHECK_THROWS_WITH_AS(t.view({12}), doctest::Contains("use reshape"), gr::Error);
  Tensor r = t.reshape({12});
  CHECK_FALSE(r.storage().is_same(a.storage()));
  check_values(r, {0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11});
  CHECK(v.reshape({4, 3}).storage().is_same(a.storage()));
  CHECK(v.unsqueeze(0).flatten().sizes() == IntArrayRef({12}));
  CHECK(arange(24).reshape({2, 3, 4}).flatten(1).sizes() == IntArrayRef({2, 12}));
  CHECK(arange(24).reshape({2, 3, 4}).flatten(0, 1).sizes() == IntArrayRef({6, 4}));
  CHECK(scalar_tensor(1.0).flatten().sizes() == IntArrayRef({1}));
}

TEST_CASE("permute and transpose swap strides") {
  Tensor a = arange(24).reshape({2, 3, 4});
  Tensor p = a.permute({2, 0, 1});
  CHECK(p.sizes() == IntArrayRef({4, 2, 3}));
  CHECK(p.strides() == IntArrayRef({1, 12, 4}));
  CHECK(p.contiguous().is_contiguous());
  check_values(p.select(0, 1).select(0, 1), {13, 17, 21});
  CHECK(a.transpose(0, 2).sizes() == IntArrayRef({4, 3, 2}));
  CHECK(a.transpose(-1, 0).sizes() == IntArrayRef({4, 3, 2}));
  CHECK_THROWS_WITH_AS(a.permute({0, 1}), doctest::Contains("number of dims"), gr::Error);
  CHECK_THROWS_WITH_AS(a.permute({0, 1, 1}), doctest::Contains("repeats"), gr::Error);
  CHECK_THROWS_WITH_AS(a.transpose(0, 3), doctest::Contains("out of range"), gr::Error);
  CHECK_THROWS_WITH_AS(a.t(), doctest::Contains("<= 2 dimensions"), gr::Error);
}

TEST_CASE("narrow, slice and select address a region") {
  Tensor a = arange(20).reshape({4, 5});
  check_values(a.narrow(1, 1, 2), {1, 2, 6, 7, 11, 12, 16, 17});
  check_values(a.slice(0, 1, 4, 2), {5, 6, 7, 8, 9, 15, 16, 17, 18, 19});
  check_values(a.slice(1, -2, 100), {3, 4, 8, 9, 13, 14, 18, 19});  // clamps like Python
  check_values(a.select(1, -1), {4, 9, 14, 19});
  check_values(a[2], {10, 11, 12, 13, 14});
  CHECK_THROWS_WITH_AS(a.narrow(1, 3, 3), doctest::Contains("exceeds dimension size"), gr::Error);
  CHECK_THROWS_WITH_AS(a.select(0, 4), doctest::Contains("out of range"), gr::Error);
  CHECK_THROWS_WITH_AS(a.slice(0, 0, 2, 0), doctest::Contains("step must be positive"), gr::Error);
  // Writes through a view reach the base.
  Tensor col = a.select(1, 0);
  col.fill_(-1);
  check_values(a.select(1, 0), {-1, -1, -1, -1});
}

TEST_CASE("expand, squeeze and unsqueeze") {
  Tensor a = tensor({1.0, 2.0, 3.0}).reshape({3, 1});
  Tensor e = a.expand({2, 3, 4});
  CHECK(e.strides() == IntArrayRef({0, 1, 0}));
  CHECK(e.contiguous().numel() == 24);
  check_values(e.select(0, 1).select(1, 3), {1, 2, 3});
  CHECK(a.expand({-1, 2}).sizes() == IntArrayRef({3, 2}));
  CHECK_THROWS_WITH_AS(a.expand({2, 2}), doctest::Contains("must match the existing size"), gr::Error);
  CHECK_THROWS_WITH_AS(a.expand({4}), doctest::Contains("greater or equal"), gr::Error);
  CHECK(zeros({1, 3, 1}).squeeze().sizes() == IntArrayRef({3}));
  CHECK(zeros({1, 3, 1}).squeeze(0).sizes() == IntArrayRef({3, 1}));
  CHECK(zeros({1, 3, 1}).squeeze(1).sizes() == IntArrayRef({1, 3, 1}));
  CHECK(zeros({3}).unsqueeze(0).sizes() == IntArrayRef({1, 3}));
  CHECK(zeros({3}).unsqueeze(-1).sizes() == IntArrayRef({3, 1}));
}

TEST_CASE("clone and contiguous") {
  Tensor a = arange(6).reshape({2, 3});
  CHECK(a.contiguous().is_same(a));
  Tensor c = a.clone();
  CHECK_FALSE(c.storage().is_same(a.storage()));
  c.fill_(0);
  check_values(a, {0, 1, 2, 3, 4, 5});
  Tensor t = a.t().contiguous();
  CHECK(t.is_contiguous());
  check_values(t, {0, 3, 1, 4, 2, 5});
}

TEST_CASE("cat and stack") {
  Tensor a = arange(4).reshape({2, 2}), b = arange(4, 10).reshape({2, 3});
  check_values(cat({a, b}, 1), {0, 1, 4, 5, 6, 2, 3, 7, 8, 9});
  CHECK(stack({a, a}, 0).sizes() == IntArrayRef({2, 2, 2}));
  CHECK(stack({a, a}, 2).sizes() == IntArrayRef({2, 2, 2}));
  check_values(stack({a, a}, 2).select(2, 1), {0, 1, 2, 3});
  CHECK_THROWS_WITH_AS(cat({a, b}, 0), doctest::Contains("sizes of tensors must match"), gr::Error);
  CHECK_THROWS_WITH_AS(stack({a, b}), doctest::Contains("equal size"), gr::Error);
  CHECK_THROWS_AS(cat({}, 0), gr::Error);
  CHECK(cat({a.to(kFloat32), a}, 0).scalar_type() == kFloat32);
}

TEST_CASE("copy_ broadcasts and converts") {
  Tensor dst = zeros({2, 3});
  dst.copy_(tensor({1, 2, 3}));
  check_values(dst, {1, 2, 3, 1, 2, 3});
  Tensor t = arange(6, kFloat64).reshape({3, 2}).t();
  Tensor d2 = empty({2, 3}, kInt64);
  d2.copy_(t);
  check_values(d2, {0, 2, 4, 1, 3, 5});
  CHECK_THROWS_AS(dst.copy_(zeros({4})), gr::Error);
  // Overlapping source and destination with different layouts read the source first.
  Tensor m = arange(4, kFloat32).reshape({2, 2});
  m.copy_(m.t());
  check_values(m, {0, 2, 1, 3});
}
