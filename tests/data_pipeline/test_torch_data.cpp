// torch::data's shape: Dataset<Self> with map(), the transforms (Normalize, Stack, Lambda),
// make_data_loader with its default RandomSampler, and datasets::MNIST. The samplers have
// their own files (test_sampler.cpp, test_distributed_sampler.cpp).
#include <algorithm>
#include <atomic>

#include "data_files.h"
#include "test_util.h"

using namespace gr;
using gr::test::error_of;
namespace ds = gr::data::datasets;
namespace tf = gr::data::transforms;
namespace sp = gr::data::samplers;

namespace {

// Example i: data [1, 2, 2] filled with i, target i; get(bad) throws.
struct Squares : ds::Dataset<Squares> {
  explicit Squares(size_t n, size_t bad = SIZE_MAX) : n(n), bad(bad) {}
  data::Example<> get(size_t i) override {
    GR_CHECK(i != bad, "Squares: example ", i, " is broken");
    return {full({1, 2, 2}, static_cast<double>(i), kFloat32), scalar_tensor(static_cast<int64_t>(i), kInt64)};
  }
  std::optional<size_t> size() const override { return n; }
  size_t n, bad;
};

std::vector<int64_t> targets_of(const Tensor& t) {
  const int64_t* p = t.data_ptr<int64_t>();
  return {p, p + t.numel()};
}

}  // namespace

TEST_CASE("Dataset<Self>: get_batch gathers get(i) in order, and map() chains transforms") {
  Squares squares(5);
  CHECK(squares.size() == std::optional<size_t>(5));
  std::vector<size_t> idx = {3, 1};
  std::vector<data::Example<>> batch = squares.get_batch(idx);
  REQUIRE(batch.size() == 2);
  CHECK(batch[0].target.item<int64_t>() == 3);
  CHECK(batch[1].data.sum().item<double>() == 4);

  auto doubled = squares.map(tf::TensorLambda<>([](Tensor x) { return x * 2; }));
  auto stacked = std::move(doubled).map(tf::Stack<>());
  static_assert(std::is_same_v<decltype(stacked)::BatchType, data::Example<>>);
  CHECK(stacked.size() == std::optional<size_t>(5));
  data::Example<> b = stacked.get_batch(idx);
  CHECK(test::shape(b.data) == std::vector<int64_t>{2, 1, 2, 2});
  test::check_values(b.data.flatten(), {6, 6, 6, 6, 2, 2, 2, 2});
  CHECK(targets_of(b.target) == std::vector<int64_t>{3, 1});
}

TEST_CASE("transforms: Normalize, Lambda, BatchLambda and Stack of TensorExample") {
  Tensor image = arange(8, kFloat32).reshape({2, 2, 2});
  data::Example<> e(image, scalar_tensor(int64_t{7}, kInt64));
  data::Example<> one = tf::Normalize<>(0.5, 0.25).apply(e);
  test::check_values(one.data.flatten(), {-2, 2, 6, 10, 14, 18, 22, 26}, 1e-6);
  CHECK(one.target.item<int64_t>() == 7);
  data::Example<> per_channel = tf::Normalize<>({0.0, 4.0}, {1.0, 2.0}).apply(e);
  test::check_values(per_channel.data.flatten(), {0, 1, 2, 3, 0, 0.5, 1, 1.5}, 1e-6);
  CHECK_THROWS_WITH_AS(tf::Normalize<>({0.0, 1.0, 2.0}, {1.0, 1.0, 1.0}).apply(e), doctest::Contains("channel"),
                       gr::Error);

  tf::Lambda<data::Example<>> relabel([](data::Example<> x) {
    x.target = x.target + 1;
    return x;
  });
  std::vector<data::Example<>> two = relabel.apply_batch({e, e});
  CHECK(two[1].target.item<int64_t>() == 8);

  tf::BatchLambda<std::vector<data::Example<>>, size_t> count([](std::vector<data::Example<>> b) { return b.size(); });
  CHECK(count.apply_batch({e, e, e}) == 3);

  data::TensorExample t = tf::Stack<data::TensorExample>().apply_batch({data::TensorExample(image), data::TensorExample(image)});
  CHECK(test::shape(t.data) == std::vector<int64_t>{2, 2, 2, 2});
}

TEST_CASE("make_data_loader: batches in sampler order, drop_last, the same for any number of workers") {
  auto stacked = Squares(10).map(tf::Stack<>());
  auto loader = data::make_data_loader<sp::SequentialSampler>(stacked, data::DataLoaderOptions().batch_size(3));
  std::vector<std::vector<int64_t>> seen;
  for (auto& batch : *loader) seen.push_back(targets_of(batch.target));
  CHECK(seen == std::vector<std::vector<int64_t>>{{0, 1, 2}, {3, 4, 5}, {6, 7, 8}, {9}});
  CHECK(loader->options().batch_size() == 3);

  auto dropping = data::make_data_loader<sp::SequentialSampler>(stacked, data::DataLoaderOptions(3).drop_last(true));
  int64_t batches = 0;
  for (auto& batch : *dropping) {
    CHECK(batch.data.size(0) == 3);
    ++batches;
  }
  CHECK(batches == 3);

  // The default sampler is RandomSampler over the default generator.
  auto epochs_with = [&](size_t workers) {
    manual_seed(5);
    auto l = data::make_data_loader(stacked, data::DataLoaderOptions().batch_size(4).workers(workers).max_jobs(2));
    std::vector<std::vector<int64_t>> out;
    for (int epoch = 0; epoch < 2; ++epoch)
      for (auto& batch : *l) out.push_back(targets_of(batch.target));
    return out;
  };
  std::vector<std::vector<int64_t>> reference = epochs_with(0);
  REQUIRE(reference.size() == 6);
  std::vector<int64_t> flat;
  for (size_t i = 0; i < 3; ++i) flat.insert(flat.end(), reference[i].begin(), reference[i].end());
  std::sort(flat.begin(), flat.end());
  CHECK(flat == std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  CHECK(reference[0] != reference[3]);  // each begin() is a new epoch
  CHECK(epochs_with(1) == reference);
  CHECK(epochs_with(3) == reference);
}

TEST_CASE("make_data_loader without Stack yields vectors of examples; each worker owns a dataset copy") {
  struct Counting : ds::Dataset<Counting> {
    std::shared_ptr<std::atomic<int>> copies = std::make_shared<std::atomic<int>>(0);
    Counting() = default;
    Counting(const Counting& o) : copies(o.copies) { ++*copies; }
    Counting(Counting&&) = default;
    data::Example<> get(size_t i) override { return {full({1}, static_cast<double>(i)), tensor({int(i)})}; }
    std::optional<size_t> size() const override { return 6; }
  };
  Counting counting;
  auto loader = data::make_data_loader(counting, sp::DistributedSequentialSampler(6, 2, 1),
                                       data::DataLoaderOptions().batch_size(2).workers(3));
  CHECK(*counting.copies == 3);  // the argument, then one for each worker but the last (moved in)
  std::vector<size_t> sizes;
  std::vector<double> values;
  for (std::vector<data::Example<>>& batch : *loader) {
    sizes.push_back(batch.size());
    for (auto& e : batch) values.push_back(e.data.item<double>());
  }
  CHECK(sizes == std::vector<size_t>{2, 1});
  CHECK(values == std::vector<double>{1, 3, 5});  // rank 1 of 2: every other index (Note [DistributedSampler order])
}

TEST_CASE("make_data_loader errors: a failing example, a stale iterator, bad options") {
  for (size_t workers : {0, 2}) {
    CAPTURE(workers);
    auto loader = data::make_data_loader<sp::SequentialSampler>(Squares(8, /*bad=*/5).map(tf::Stack<>()),
                                                                data::DataLoaderOptions(2).workers(workers));
    std::vector<int64_t> firsts;
    std::string message = error_of([&] {
      for (auto& batch : *loader) firsts.push_back(batch.target[0].item<int64_t>());
    });
    CHECK(message == "Squares: example 5 is broken");
    CHECK(firsts == std::vector<int64_t>{0, 2});
  }
  auto loader = data::make_data_loader<sp::SequentialSampler>(Squares(4).map(tf::Stack<>()), 2);
  auto old = loader->begin();
  loader->begin();
  CHECK(error_of([&] { ++old; }) == "DataLoader: an iterator of epoch 0 was used after begin() started epoch 1");
  CHECK_THROWS_WITH_AS(data::make_data_loader(Squares(4), data::DataLoaderOptions(0)), doctest::Contains("batch_size"),
                       gr::Error);
  struct Unsized : ds::Dataset<Unsized> {
    data::Example<> get(size_t) override { return {}; }
    std::optional<size_t> size() const override { return std::nullopt; }
  };
  CHECK_THROWS_WITH_AS(data::make_data_loader(Unsized()), doctest::Contains("no size"), gr::Error);
}

TEST_CASE("datasets::MNIST + Normalize + Stack through make_data_loader") {
  test::TempDir dir;
  const uint32_t n = 7;
  test::Bytes pixels(size_t{n} * 28 * 28), labels(n);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<uint8_t>(i % 251);
  for (uint32_t i = 0; i < n; ++i) labels[i] = static_cast<uint8_t>((3 * i) % 10);
  test::write_file(dir / "t10k-images-idx3-ubyte", test::concat(test::idx_header(0x08, {n, 28, 28}), pixels));
  test::write_file(dir / "t10k-labels-idx1-ubyte", test::concat(test::idx_header(0x08, {n}), labels));

  ds::MNIST mnist(dir.str(), ds::MNIST::Mode::kTest);
  CHECK(!mnist.is_train());
  CHECK(mnist.size() == std::optional<size_t>(n));
  CHECK(test::shape(mnist.images()) == std::vector<int64_t>{n, 1, 28, 28});
  CHECK(mnist.get(4).target.item<int64_t>() == 2);
  CHECK_THROWS_WITH_AS(mnist.get(n), doctest::Contains("out of range"), gr::Error);

  auto dataset = mnist.map(tf::Normalize<>(0.5, 0.25)).map(tf::Stack<>());
  auto loader = data::make_data_loader<sp::SequentialSampler>(std::move(dataset),
                                                              data::DataLoaderOptions().batch_size(4).workers(2));
  std::vector<int64_t> batch_sizes, targets;
  for (auto& batch : *loader) {
    batch_sizes.push_back(batch.data.size(0));
    std::vector<int64_t> t = targets_of(batch.target);
    targets.insert(targets.end(), t.begin(), t.end());
    // pixel k of the batch is pixel (first * 784 + k) of the file, normalized
    const int64_t first = static_cast<int64_t>(targets.size()) - batch.data.size(0);
    const float* p = batch.data.data_ptr<float>();
    for (int64_t k : {int64_t{0}, int64_t{300}, batch.data.numel() - 1}) {
      const double raw = static_cast<double>((first * 784 + k) % 251) / 255.0;
      CHECK(p[k] == doctest::Approx((raw - 0.5) / 0.25).epsilon(1e-6));
    }
  }
  CHECK(batch_sizes == std::vector<int64_t>{4, 3});
  CHECK(targets == std::vector<int64_t>{0, 3, 6, 9, 2, 5, 8});
  CHECK_THROWS_WITH_AS(ds::MNIST(dir / "absent"), doctest::Contains("does not exist"), gr::Error);
  CHECK_THROWS_WITH_AS(ds::MNIST(dir.str()), doctest::Contains("train-images-idx3-ubyte"), gr::Error);
}
