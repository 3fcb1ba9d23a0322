// The loader (make_data_loader): batch shapes and drop_last, epochs and epoch(e, k),
// identical batches for any number of workers (gathered rows or get + stack, transforms
// before or after Stack), errors from workers, timeouts, and shutdown in the middle of an epoch.
#include <atomic>
#include <chrono>
#include <fstream>
#include <set>
#include <thread>

#include "test_util.h"

using namespace gr;
using gr::test::error_of;
using namespace std::chrono_literals;
namespace ds = gr::data::datasets;
namespace tf = gr::data::transforms;
namespace sp = gr::data::samplers;

namespace {

// A dataset without rows(): the loader calls get() and stacks. Optionally slow, and
// optionally failing at one index; `calls` is shared by the copies a loader makes.
struct ByIndex : ds::Dataset<ByIndex> {
  Tensor images;  // [N, C, H, W]
  int64_t fail_at = -1;
  std::chrono::milliseconds delay{0};
  std::shared_ptr<std::atomic<int>> calls = std::make_shared<std::atomic<int>>(0);

  explicit ByIndex(Tensor x) : images(std::move(x)) {}
  std::optional<size_t> size() const override { return static_cast<size_t>(images.size(0)); }
  data::Example<> get(size_t i) override {
    ++*calls;
    if (delay.count() > 0) std::this_thread::sleep_for(delay);
    GR_CHECK(static_cast<int64_t>(i) != fail_at, "ByIndex: example ", i, " is broken");
    return {images[static_cast<int64_t>(i)], scalar_tensor(static_cast<int64_t>(i), kInt64)};
  }
};

Tensor images(int64_t n) { return randn({n, 3, 8, 8}, kFloat32, nullptr); }

std::vector<int64_t> as_vector(const Tensor& t) {
  const int64_t* p = t.data_ptr<int64_t>();
  return {p, p + t.numel()};
}

template <class Range>
std::vector<data::Example<>> collect(Range&& batches) {
  std::vector<data::Example<>> out;
  for (data::Example<>& batch : batches) out.push_back(batch);
  return out;
}

void check_same(const std::vector<data::Example<>>& got, const std::vector<data::Example<>>& expected) {
  REQUIRE(got.size() == expected.size());
  for (size_t k = 0; k < got.size(); ++k) {
    CAPTURE(k);
    CHECK(got[k].data.equal(expected[k].data));
    CHECK(got[k].target.equal(expected[k].target));
  }
}

// Threads of this process (Linux).
int thread_count() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  }
  return -1;
}

// thread_count(), once it is `expected` or a second has passed: a joined thread can linger in
// /proc for a moment while the kernel reaps it.
int settled_thread_count(int expected) {
  for (int i = 0; i < 100 && thread_count() != expected; ++i) std::this_thread::sleep_for(10ms);
  return thread_count();
}

}  // namespace

TEST_CASE("loader batch sizes, drop_last, and epoch(e, k) starting at batch k") {
  auto rows = ds::TensorDataset(arange(20, kFloat32).reshape({10, 2}), arange(10)).map(tf::Stack<>());
  auto keep = data::make_data_loader<sp::SequentialSampler>(rows, data::DataLoaderOptions().batch_size(4));
  std::vector<data::Example<>> batches = collect(*keep);
  REQUIRE(batches.size() == 3);
  CHECK(test::shape(batches[0].data) == std::vector<int64_t>{4, 2});
  CHECK(test::shape(batches[2].data) == std::vector<int64_t>{2, 2});
  CHECK(as_vector(batches[2].target) == std::vector<int64_t>{8, 9});
  test::check_values(batches[1].data, {8, 9, 10, 11, 12, 13, 14, 15});
  CHECK(keep->epoch(0).num_batches() == 3);
  auto tail = keep->epoch(5, 1);
  CHECK(tail.num_batches() == 3);
  check_same(collect(tail), {batches[1], batches[2]});
  CHECK(collect(keep->epoch(0, 3)).empty());

  auto drop = data::make_data_loader<sp::SequentialSampler>(rows, data::DataLoaderOptions(4).drop_last(true).workers(2));
  batches = collect(*drop);
  REQUIRE(batches.size() == 2);
  CHECK(as_vector(batches[1].target) == std::vector<int64_t>{4, 5, 6, 7});
  auto none = data::make_data_loader<sp::SequentialSampler>(rows, data::DataLoaderOptions(11).drop_last(true));
  CHECK(none->epoch(0).num_batches() == 0);
  CHECK(collect(*none).empty());
}

TEST_CASE("a seeded RandomSampler visits every example once per epoch, a new order each epoch, and replays epochs") {
  const int64_t n = 103;
  ds::TensorDataset rows(images(n), arange(n));
  for (size_t workers : {0, 2}) {
    CAPTURE(workers);
    auto loader = data::make_data_loader(rows.map(tf::Stack<>()), sp::RandomSampler(n, uint64_t{5}),
                                         data::DataLoaderOptions(8).workers(workers));
    std::vector<int64_t> order[2];
    for (int64_t epoch = 0; epoch < 2; ++epoch) {
      for (data::Example<>& batch : *loader) {  // begin() starts epochs 0, 1, ...
        std::vector<int64_t> ids = as_vector(batch.target);
        for (size_t j = 0; j < ids.size(); ++j) CHECK(batch.data[static_cast<int64_t>(j)].equal(rows.data()[ids[j]]));
        order[epoch].insert(order[epoch].end(), ids.begin(), ids.end());
      }
      CHECK(std::set<int64_t>(order[epoch].begin(), order[epoch].end()).size() == size_t(n));
      // The order is gr::randperm from a generator seeded with seed + epoch (Note [Sampler epochs]).
      Generator gen(5 + static_cast<uint64_t>(epoch));
      CHECK(order[epoch] == as_vector(randperm(n, &gen)));
    }
    CHECK(order[0] != order[1]);
    std::vector<int64_t> again;
    for (data::Example<>& batch : loader->epoch(1)) {
      std::vector<int64_t> ids = as_vector(batch.target);
      again.insert(again.end(), ids.begin(), ids.end());
    }
    CHECK(again == order[1]);
  }
}

TEST_CASE("batches are identical for 0, 1 and 3 workers: gathered rows or get + stack, transforms before or after Stack") {
  const int64_t n = 150;
  Tensor x = images(n);
  tf::RandomCrop<> crop(8, 2);
  tf::RandomHorizontalFlip<> flip;
  tf::Normalize<> normalize({0.1, 0.2, 0.3}, {1, 2, 3});
  auto options = [](size_t workers) { return data::DataLoaderOptions(16).seed(99).workers(workers); };
  auto sampler = [] { return sp::RandomSampler(150, uint64_t{7}); };
  // After Stack: on rows gathered with one copy each, and on stacked get(i).
  auto gathered = ds::TensorDataset(x, arange(n)).map(tf::Stack<>()).map(crop).map(flip).map(normalize);
  auto stacked = ByIndex(x).map(tf::Stack<>()).map(crop).map(flip).map(normalize);
  // Before Stack, one example at a time (Note [Transform randomness]).
  auto per_example = ByIndex(x).map(crop).map(flip).map(normalize).map(tf::Stack<>());
  auto reference = data::make_data_loader(gathered, sampler(), options(0));
  for (int64_t epoch = 0; epoch < 2; ++epoch) {
    CAPTURE(epoch);
    std::vector<data::Example<>> expected = collect(reference->epoch(epoch));
    REQUIRE(expected.size() == 10);
    for (size_t workers : {0, 1, 3}) {
      CAPTURE(workers);
      check_same(collect(data::make_data_loader(gathered, sampler(), options(workers))->epoch(epoch)), expected);
      check_same(collect(data::make_data_loader(stacked, sampler(), options(workers))->epoch(epoch)), expected);
      check_same(collect(data::make_data_loader(per_example, sampler(), options(workers))->epoch(epoch)), expected);
    }
    // A batch made after a resume is the batch of the uninterrupted epoch.
    check_same(collect(reference->epoch(epoch, 7)), {expected[7], expected[8], expected[9]});
  }
  // The transforms really are random, per epoch and per seed: the same examples differ.
  auto in_order = data::make_data_loader<sp::SequentialSampler>(gathered, options(0));
  Tensor first = collect(in_order->epoch(0))[0].data;
  CHECK(!first.equal(collect(in_order->epoch(1))[0].data));
  CHECK(!first.equal(collect(data::make_data_loader<sp::SequentialSampler>(gathered, options(0).seed(98))->epoch(0))[0].data));
  CHECK(first.equal(collect(in_order->epoch(0))[0].data));
}

TEST_CASE("the loader takes a custom sampler, and reports an index beyond the dataset") {
  struct Evens : sp::Sampler<> {
    size_t count, index = 0;
    explicit Evens(size_t c) : count(c) {}
    void reset(std::optional<size_t>) override { index = 0; }
    std::optional<std::vector<size_t>> next(size_t batch_size) override {
      if (index >= count) return std::nullopt;
      std::vector<size_t> out;
      for (; index < count && out.size() < batch_size; ++index) out.push_back(2 * index);
      return out;
    }
  };
  auto rows = ds::TensorDataset(images(10), arange(10)).map(tf::Stack<>());
  auto loader = data::make_data_loader(rows, Evens(5), data::DataLoaderOptions(3));
  std::vector<data::Example<>> batches = collect(*loader);
  REQUIRE(batches.size() == 2);
  CHECK(as_vector(batches[1].target) == std::vector<int64_t>{6, 8});
  auto beyond = data::make_data_loader(rows, Evens(6), data::DataLoaderOptions(3));
  CHECK(error_of([&] { collect(*beyond); }) == "DataLoader: sampler index 10 out of range for a dataset of 10 examples");
}

TEST_CASE("the loader rethrows a worker's exception at the failing batch, with its message") {
  ByIndex failing(images(100));
  failing.fail_at = 37;
  for (size_t workers : {0, 1, 3}) {
    CAPTURE(workers);
    auto loader = data::make_data_loader<sp::SequentialSampler>(failing.map(tf::Stack<>()),
                                                                data::DataLoaderOptions(5).workers(workers));
    int delivered = 0;
    std::string message = error_of([&] {
      for (data::Example<>& batch : *loader) {
        CHECK(batch.data.size(0) == 5);
        ++delivered;
      }
    });
    CHECK(message == "ByIndex: example 37 is broken");
    CHECK(delivered == 7);  // batches 0..6 hold examples 0..34
  }
}

TEST_CASE("starting another epoch, join() and destroying the loader stop the workers promptly") {
  ByIndex slow(images(400));
  slow.delay = 2ms;
  auto calls = slow.calls;
  collect(*data::make_data_loader<sp::SequentialSampler>(ByIndex(images(8)).map(tf::Stack<>()), 4));  // warm up
  const int threads_before = thread_count();
  auto start = std::chrono::steady_clock::now();
  {
    auto loader = data::make_data_loader<sp::SequentialSampler>(slow.map(tf::Stack<>()),
                                                                data::DataLoaderOptions(4).workers(3));
    int seen = 0;
    for (data::Example<>& batch : *loader) {
      CHECK(batch.data.size(0) == 4);
      if (++seen == 2) break;
    }
    auto unused = loader->epoch(1);  // never begun: no worker makes its batches
    auto started = loader->epoch(2, 50);
    CHECK(as_vector(started.begin()->target) == std::vector<int64_t>{200, 201, 202, 203});
    loader->join();
    CHECK(settled_thread_count(threads_before) == threads_before);  // join() waited for them
    CHECK(loader->epoch(3, 99).begin()->data.size(0) == 4);
  }  // the loader's destructor joins epoch 3's workers
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(seconds < 2.0);  // each epoch ends after at most the batches in flight
  CHECK(settled_thread_count(threads_before) == threads_before);
  // Workers claim at most capacity (3 x 2) batches beyond those taken: 2 + 6, 1 + 6, 1.
  CHECK(calls->load() <= 4 * (8 + 7 + 1));
}

TEST_CASE("the loader's timeout bounds the wait for one batch") {
  ByIndex slow(images(4));
  slow.delay = 300ms;
  auto loader = data::make_data_loader<sp::SequentialSampler>(slow.map(tf::Stack<>()),
                                                              data::DataLoaderOptions(1).workers(1).timeout(50ms));
  CHECK(error_of([&] { loader->begin(); }) == "DataLoader: batch 0 of epoch 0 not ready after 50 ms (workers 1)");
}

TEST_CASE("the loader checks its options and its use") {
  auto rows = ds::TensorDataset(images(4), arange(4)).map(tf::Stack<>());
  CHECK_THROWS_WITH_AS(data::make_data_loader(rows, data::DataLoaderOptions(0)), doctest::Contains("batch_size"),
                       gr::Error);
  CHECK_THROWS_WITH_AS(data::make_data_loader(rows, data::DataLoaderOptions(2).workers(2).max_jobs(0)),
                       doctest::Contains("max_jobs"), gr::Error);
  CHECK_THROWS_WITH_AS(data::make_data_loader(ByIndex(images(4)), data::DataLoaderOptions(2).pin_memory(true)),
                       doctest::Contains("pin_memory needs batches of tensors"), gr::Error);
  auto loader = data::make_data_loader<sp::SequentialSampler>(rows, data::DataLoaderOptions(2));
  auto epoch = loader->epoch(0);
  epoch.begin();
  CHECK_THROWS_WITH_AS(epoch.begin(), doctest::Contains("once"), gr::Error);
  CHECK_THROWS_WITH_AS(loader->epoch(0, 3), doctest::Contains("first batch 3 out of range [0, 2]"), gr::Error);
  CHECK_THROWS_WITH_AS(loader->epoch(-1), doctest::Contains("epoch must be >= 0"), gr::Error);
  auto old = loader->begin();  // epoch 1
  loader->begin();             // epoch 2
  CHECK(error_of([&] { ++old; }) == "DataLoader: an iterator of epoch 1 was used after begin() started epoch 2");
}
