// The Dataset interface: a minimal in-test implementation behaves as documented.
#include "test_util.h"

using namespace gr;

namespace {
struct Squares : data::Dataset {
  int64_t size() const override { return 4; }
  data::Example<> get(int64_t i) const override {
    GR_CHECK(i >= 0 && i < size(), "Squares: index ", i, " out of range");
    return {full({1}, static_cast<double>(i * i)), scalar_tensor(i, kInt64)};
  }
};
}  // namespace

TEST_CASE("a Dataset returns examples by index") {
  Squares s;
  CHECK(s.size() == 4);
  CHECK(s.get(3).data.item<double>() == 9);
  CHECK(s.get(2).target.item<int64_t>() == 2);
  CHECK_THROWS_AS(s.get(4), gr::Error);
}

TEST_CASE("TensorDataset yields rows and checks its arguments") {
  data::TensorDataset ds(arange(12, kFloat32).reshape({4, 3}), arange(4));
  CHECK(ds.size() == 4);
  gr::test::check_values(ds.get(1).data, {3, 4, 5});
  CHECK(ds.get(3).target.item<int64_t>() == 3);
  CHECK_THROWS_WITH_AS(ds.get(-1), doctest::Contains("out of range"), gr::Error);
  CHECK_THROWS_WITH_AS(data::TensorDataset(zeros({3, 2}), zeros({4})), doctest::Contains("3 examples"), gr::Error);
}
