// Storage::release / reallocate (Note [Released storage]): reads of a released storage are a
// gr::Error with its message, views and saved tensors see the reallocated memory, the
// version counter is kept (and set_version restores it after a write autograd must not see).
#include "test_util.h"

using namespace gr;

TEST_CASE("a released storage holds no memory and every read throws its message; reallocate ends it") {
  Tensor t = arange(6, TensorOptions(kFloat32));
  Tensor v = t.view({2, 3}).t();  // a view shares the StorageImpl
  Storage s = t.storage();
  const uint32_t version = s.version();
  s.release("released for the test");
  CHECK(s.is_released());
  CHECK(t.storage().nbytes() == 0);
  CHECK(v.storage().is_released());
  CHECK_THROWS_WITH_AS(t.sum(), doctest::Contains("released for the test"), gr::Error);
  CHECK_THROWS_WITH_AS((void)v.data_ptr<float>(), doctest::Contains("released for the test"), gr::Error);
  s.release("another reason");  // a second release only replaces the message
  CHECK_THROWS_WITH_AS(t.sum(), doctest::Contains("another reason"), gr::Error);
  s.reallocate(6 * sizeof(float));
  CHECK_FALSE(s.is_released());
  CHECK(s.version() == version);
  t.fill_(2.0);  // an in-place write bumps the version as usual
  CHECK(s.version() == version + 1);
  test::check_values(v.contiguous().view({6}), {2, 2, 2, 2, 2, 2});
  s.set_version(version);
  CHECK(t._version() == version);
}

TEST_CASE("a tensor saved for backward is read from the reallocated memory, without a version error") {
  Tensor w = full({3}, 2.0).requires_grad_();
  Tensor x = full({3}, 1.0).requires_grad_();
  Tensor y = (x * w).sum();  // saves w for x's gradient
  Storage s = w.storage();
  const uint32_t version = s.version();
  s.release("w is sharded");
  s.reallocate(3 * sizeof(float));
  {
    // A write autograd must not see: the version restored afterwards.
    NoGradGuard no_grad;
    w.fill_(5.0);
  }
  s.set_version(version);
  y.backward();
  test::check_values(x.grad(), {5, 5, 5});
  // Released again: backward through a graph reading it is the release's error.
  Tensor z = (x * w).sum();
  s.release("w is sharded again");
  CHECK_THROWS_WITH_AS(z.backward(), doctest::Contains("w is sharded again"), gr::Error);
}
