// The Dataset interface (datasets::Dataset<Self>): a minimal in-test implementation behaves as
// documented; TensorDataset yields rows and gathers them (Note [Row gather]).
#include "test_util.h"

using namespace gr;
namespace ds = gr::data::datasets;
namespace tf = gr::data::transforms;

namespace {
struct Squares : ds::Dataset<Squares> {
  std::optional<size_t> size() const override { return 4; }
  data::Example<> get(size_t i) override {
    GR_CHECK(i < 4, "Squares: index ", i, " out of range");
    return {full({1}, static_cast<double>(i * i)), scalar_tensor(static_cast<int64_t>(i), kInt64)};
  }
};
}  // namespace

TEST_CASE("a Dataset returns examples by index, and batches of them") {
  Squares s;
  CHECK(s.size() == std::optional<size_t>(4));
  CHECK(s.get(3).data.item<double>() == 9);
  CHECK(s.get(2).target.item<int64_t>() == 2);
  CHECK_THROWS_AS(s.get(4), gr::Error);
  std::vector<size_t> idx = {1, 3};
  std::vector<data::Example<>> batch = s.get_batch(idx);
  REQUIRE(batch.size() == 2);
  CHECK(batch[1].data.item<double>() == 9);
}

TEST_CASE("TensorDataset yields rows, gathers a stacked batch row by row, and checks its arguments") {
  ds::TensorDataset rows(arange(12, kFloat32).reshape({4, 3}), arange(4));
  CHECK(rows.size() == std::optional<size_t>(4));
  gr::test::check_values(rows.get(1).data, {3, 4, 5});
  CHECK(rows.get(3).target.item<int64_t>() == 3);
  CHECK(rows.rows().data.is_same(rows.data()));
  CHECK_THROWS_WITH_AS(rows.get(4), doctest::Contains("out of range"), gr::Error);
  CHECK_THROWS_WITH_AS(ds::TensorDataset(zeros({3, 2}), zeros({4})), doctest::Contains("3 examples"), gr::Error);
  // Stack over rows: one copy per row, the same values as stacking get(i).
  std::vector<size_t> idx = {3, 0, 3};
  data::Example<> gathered = rows.map(tf::Stack<>()).get_batch(idx);
  data::Example<> stacked = tf::Stack<>().apply_batch(rows.get_batch(idx));
  CHECK(gathered.data.equal(stacked.data));
  CHECK(gathered.target.equal(stacked.target));
  CHECK(gathered.data.is_contiguous());
  // Rows that are not contiguous are stacked the ordinary way.
  ds::TensorDataset strided(arange(12, kFloat32).reshape({3, 4}).t(), arange(4));
  gr::test::check_values(strided.map(tf::Stack<>()).get_batch(idx).data, {3, 7, 11, 0, 4, 8, 3, 7, 11});
}
