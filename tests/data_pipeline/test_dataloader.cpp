// DataLoader: batch shapes and drop_last, coverage, identical batches for any num_workers,
// errors from workers, timeouts, and shutdown in the middle of an epoch.
#include <atomic>
#include <chrono>
#include <fstream>
#include <set>
#include <thread>

#include "data/dataloader.h"
#include "data/tensor_dataset.h"
#include "test_util.h"

using namespace gr;
using gr::test::error_of;
using namespace std::chrono_literals;

namespace {

// A dataset without as_tensors(): the loader must call get() and stack. Optionally slow,
// and optionally failing at one index.
struct ByIndex : data::Dataset {
  Tensor images;  // [N, C, H, W]
  int64_t fail_at = -1;
  std::chrono::milliseconds delay{0};
  mutable std::atomic<int> calls{0};

  explicit ByIndex(Tensor x) : images(std::move(x)) {}
  int64_t size() const override { return images.size(0); }
  data::Example<> get(int64_t i) const override {
    ++calls;
    if (delay.count() > 0) std::this_thread::sleep_for(delay);
    GR_CHECK(i != fail_at, "ByIndex: example ", i, " is broken");
    return {images[i], scalar_tensor(i, kInt64)};
  }
};

Tensor images(int64_t n) { return randn({n, 3, 8, 8}, kFloat32, nullptr); }

std::vector<int64_t> as_vector(const Tensor& t) {
  const int64_t* p = t.data_ptr<int64_t>();
  return {p, p + t.numel()};
}

std::vector<data::Example<>> collect(const data::DataLoader& loader, int64_t epoch) {
  std::vector<data::Example<>> out;
  for (data::Example<>& batch : loader.epoch(epoch)) out.push_back(batch);
  return out;
}

// Threads of this process (Linux).
int thread_count() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  }
  return -1;
}

}  // namespace

TEST_CASE("DataLoader batch sizes and drop_last") {
  auto ds = std::make_shared<data::TensorDataset>(arange(20, kFloat32).reshape({10, 2}), arange(10));
  data::DataLoader keep(ds, data::DataLoaderOptions().batch_size(4));
  CHECK(keep.size() == 3);
  std::vector<data::Example<>> batches = collect(keep, 0);
  REQUIRE(batches.size() == 3);
  CHECK(test::shape(batches[0].data) == std::vector<int64_t>{4, 2});
  CHECK(test::shape(batches[2].data) == std::vector<int64_t>{2, 2});
  CHECK(as_vector(batches[2].target) == std::vector<int64_t>{8, 9});
  test::check_values(batches[1].data, {8, 9, 10, 11, 12, 13, 14, 15});

  data::DataLoader drop(ds, data::DataLoaderOptions().batch_size(4).drop_last(true).workers(2));
  CHECK(drop.size() == 2);
  batches = collect(drop, 0);
  REQUIRE(batches.size() == 2);
  CHECK(as_vector(batches[1].target) == std::vector<int64_t>{4, 5, 6, 7});
  CHECK(data::DataLoader(ds, data::DataLoaderOptions().batch_size(11).drop_last(true)).size() == 0);
  CHECK(collect(data::DataLoader(ds, data::DataLoaderOptions().batch_size(11).drop_last(true)), 0).empty());
  CHECK(data::DataLoader(ds, data::DataLoaderOptions().batch_size(10)).size() == 1);
}

TEST_CASE("DataLoader with shuffle visits every example once per epoch, in a new order each epoch") {
  const int64_t n = 103;
  auto ds = std::make_shared<data::TensorDataset>(images(n), arange(n));
  for (int64_t workers : {0, 2}) {
    data::DataLoader loader(ds, data::DataLoaderOptions().batch_size(8).shuffle(true).seed(5).workers(workers));
    std::vector<int64_t> order[2];
    for (int64_t epoch = 0; epoch < 2; ++epoch) {
      for (data::Example<>& batch : loader.epoch(epoch)) {
        std::vector<int64_t> ids = as_vector(batch.target);
        for (size_t j = 0; j < ids.size(); ++j) CHECK(batch.data[j].equal(ds->data()[ids[j]]));
        order[epoch].insert(order[epoch].end(), ids.begin(), ids.end());
      }
      CHECK(order[epoch] == loader.sampler().indices(epoch));
      CHECK(std::set<int64_t>(order[epoch].begin(), order[epoch].end()).size() == size_t(n));
    }
    CHECK(order[0] != order[1]);
  }
}

TEST_CASE("DataLoader batches are identical for num_workers 0, 1 and 3 (shuffle and random transforms)") {
  const int64_t n = 150;
  Tensor x = images(n);
  auto fast = std::make_shared<data::TensorDataset>(x, arange(n));  // gathers rows
  auto slow = std::make_shared<ByIndex>(x);                         // get() + stack
  auto augment = std::make_shared<data::Compose>(data::RandomCrop(8, 2), data::RandomHorizontalFlip(),
                                                 data::Normalize({0.1, 0.2, 0.3}, {1, 2, 3}));
  auto options = [&](int64_t workers) {
    return data::DataLoaderOptions().batch_size(16).shuffle(true).seed(99).workers(workers).transform(augment);
  };
  data::DataLoader reference(fast, options(0));
  for (int64_t epoch = 0; epoch < 2; ++epoch) {
    std::vector<data::Example<>> expected = collect(reference, epoch);
    REQUIRE(expected.size() == 10);
    for (auto ds : {std::shared_ptr<const data::Dataset>(fast), std::shared_ptr<const data::Dataset>(slow)}) {
      for (int64_t workers : {0, 1, 3}) {
        CAPTURE(epoch);
        CAPTURE(workers);
        std::vector<data::Example<>> got = collect(data::DataLoader(ds, options(workers)), epoch);
        REQUIRE(got.size() == expected.size());
        for (size_t k = 0; k < got.size(); ++k) {
          CHECK(got[k].data.equal(expected[k].data));
          CHECK(got[k].target.equal(expected[k].target));
        }
      }
    }
    CHECK(reference.batch(epoch, 3).data.equal(expected[3].data));
  }
  // The transform really is random: the same example differs between epochs.
  CHECK(!reference.batch(0, 0).data.equal(data::DataLoader(fast, options(0)).batch(1, 0).data));
}

TEST_CASE("DataLoader takes a custom sampler and checks its indices") {
  struct Evens : data::Sampler {
    int64_t count;
    explicit Evens(int64_t c) : count(c) {}
    int64_t size() const override { return count; }
    std::vector<int64_t> indices(int64_t) const override {
      std::vector<int64_t> out;
      for (int64_t i = 0; i < count; ++i) out.push_back(2 * i);
      return out;
    }
  };
  auto ds = std::make_shared<data::TensorDataset>(images(10), arange(10));
  data::DataLoader loader(ds, data::DataLoaderOptions().batch_size(3).sampler(std::make_shared<Evens>(5)));
  CHECK(loader.size() == 2);
  CHECK(as_vector(loader.batch(0, 1).target) == std::vector<int64_t>{6, 8});
  data::DataLoader beyond(ds, data::DataLoaderOptions().batch_size(3).sampler(std::make_shared<Evens>(6)));
  CHECK(error_of([&] { collect(beyond, 0); }) ==
        "DataLoader: sampler index 10 out of range for a dataset of 10 examples");
}

TEST_CASE("DataLoader rethrows a worker's exception at the failing batch, with its message") {
  auto ds = std::make_shared<ByIndex>(images(100));
  ds->fail_at = 37;
  for (int64_t workers : {0, 1, 3}) {
    CAPTURE(workers);
    data::DataLoader loader(ds, data::DataLoaderOptions().batch_size(5).workers(workers));
    int delivered = 0;
    std::string message = error_of([&] {
      for (data::Example<>& batch : loader.epoch(0)) {
        CHECK(batch.data.size(0) == 5);
        ++delivered;
      }
    });
    CHECK(message == "ByIndex: example 37 is broken");
    CHECK(delivered == 7);  // batches 0..6 hold examples 0..34
  }
}

TEST_CASE("destroying a DataLoader epoch mid-way stops its workers promptly") {
  auto ds = std::make_shared<ByIndex>(images(400));
  ds->delay = 2ms;
  data::DataLoader loader(ds, data::DataLoaderOptions().batch_size(4).workers(3));
  loader.batch(0, 0);  // warm up whatever the library starts lazily
  const int threads_before = thread_count();
  auto start = std::chrono::steady_clock::now();
  {
    int seen = 0;
    for (data::Example<>& batch : loader.epoch(0)) {
      CHECK(batch.data.size(0) == 4);
      if (++seen == 2) break;
    }
    data::DataLoader::Epoch unused = loader.epoch(1);  // never iterated
    data::DataLoader::Epoch started = loader.epoch(2);
    CHECK(started.begin()->target.numel() == 4);
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(seconds < 2.0);  // each epoch ends after at most the batches in flight
  // A joined thread can linger in /proc for a moment while the kernel reaps it.
  for (int i = 0; i < 100 && thread_count() != threads_before; ++i) std::this_thread::sleep_for(10ms);
  CHECK(thread_count() == threads_before);
  // Workers claim at most capacity (3 x 2) batches beyond those taken: 2 + 6, 0 + 6, 1 + 6.
  CHECK(ds->calls.load() <= 4 * (1 + 8 + 6 + 7));
}

TEST_CASE("DataLoader timeout bounds the wait for one batch") {
  auto ds = std::make_shared<ByIndex>(images(4));
  ds->delay = 300ms;
  data::DataLoader loader(ds, data::DataLoaderOptions().batch_size(1).workers(1).timeout(50ms));
  auto epoch = loader.epoch(0);
  CHECK(error_of([&] { epoch.begin(); }) == "DataLoader: batch 0 of epoch 0 not ready after 50 ms (workers 1)");
}

TEST_CASE("DataLoader checks its options and its use") {
  auto ds = std::make_shared<data::TensorDataset>(images(4), arange(4));
  CHECK_THROWS_WITH_AS(data::DataLoader(ds, data::DataLoaderOptions().batch_size(0)), doctest::Contains("batch_size"), gr::Error);
  CHECK_THROWS_WITH_AS(data::DataLoader(ds, data::DataLoaderOptions().workers(2).max_jobs(0)), doctest::Contains("max_jobs"), gr::Error);
  CHECK_THROWS_WITH_AS(data::DataLoader(ds, data::DataLoaderOptions().shuffle(true).sampler(std::make_shared<data::SequentialSampler>(4))),
                       doctest::Contains("exclude each other"), gr::Error);
  CHECK_THROWS_AS(data::DataLoader(nullptr), gr::Error);
  data::DataLoader loader(ds, data::DataLoaderOptions().batch_size(2));
  auto epoch = loader.epoch(0);
  epoch.begin();
  CHECK_THROWS_WITH_AS(epoch.begin(), doctest::Contains("once"), gr::Error);
  CHECK_THROWS_WITH_AS(loader.batch(0, 2), doctest::Contains("out of range"), gr::Error);
}
