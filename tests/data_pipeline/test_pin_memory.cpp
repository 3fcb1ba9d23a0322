// DataLoader pin_memory and gr::pin_memory: with a CUDA device the batches are page-locked
// and hold the same values as ordinary ones; without one (this machine) the loader makes
// ordinary batches after a notice, and pin_memory() fails with a clear error.
#include <memory>

#include "core/cuda_memory.h"
#include "data/dataloader.h"
#include "data/tensor_dataset.h"
#include "test_util.h"

using namespace gr;

namespace {

// Every batch of `pinned` equals the batch of `plain`, and is pinned exactly when a device exists.
void check_same_batches(const data::DataLoader& plain, const data::DataLoader& pinned) {
  REQUIRE(plain.size() == pinned.size());
  const bool device = cuda_is_available();
  for (int64_t k = 0; k < plain.size(); ++k) {
    data::Example<> a = plain.batch(1, k), b = pinned.batch(1, k);
    CHECK(b.data.equal(a.data));
    CHECK(b.target.equal(a.target));
    CHECK(is_pinned(b.data) == device);
    CHECK(is_pinned(b.target) == device);
  }
  int64_t k = 0;
  auto epoch = pinned.epoch(1);
  for (data::Example<>& b : epoch) {  // through the workers as well
    CHECK(b.data.equal(plain.batch(1, k).data));
    CHECK(is_pinned(b.data) == device);
    ++k;
  }
  CHECK(k == plain.size());
}

}  // namespace

TEST_CASE("DataLoader pin_memory: pinned batches with a device, the same ordinary batches without") {
  auto ds = std::make_shared<data::TensorDataset>(randn({10, 3, 4, 4}), arange(10));
  for (int64_t workers : {0, 2}) {
    CAPTURE(workers);
    auto options = data::DataLoaderOptions().batch_size(4).shuffle(true).seed(3).workers(workers);
    data::DataLoaderOptions pinned = options;
    pinned.pin_memory(true);
    check_same_batches(data::DataLoader(ds, options), data::DataLoader(ds, pinned));

    // A transform makes a new tensor after the gather: pinned after it.
    auto normalize = std::make_shared<data::Normalize>(std::vector<double>{0.5}, std::vector<double>{2.0});
    options.transform(normalize);
    pinned.transform(normalize);
    check_same_batches(data::DataLoader(ds, options), data::DataLoader(ds, pinned));
  }
}

TEST_CASE("pin_memory and the CUDA memory API in this build and on this machine") {
  Tensor x = arange(12, kFloat32).reshape({3, 4});
  if (cuda_is_available()) {
    Tensor p = pin_memory(x.t());  // non-contiguous source: copied into a contiguous pinned tensor
    CHECK(is_pinned(p));
    CHECK(p.equal(x.t()));
    CHECK(pin_memory(p).is_same(p));  // already pinned: itself
    CHECK(cuda::pinned_memory_stats().allocated_bytes > 0);
    return;
  }
  CHECK_THROWS_WITH_AS(pin_memory(x), doctest::Contains("pin_memory: page-locked memory needs a CUDA device"),
                       gr::Error);
  CHECK_THROWS_WITH_AS(empty_pinned({2}, kFloat32), doctest::Contains("needs a CUDA device"), gr::Error);
  CHECK_FALSE(is_pinned(x));
  CHECK_FALSE(is_pinned(Tensor()));
  cuda::empty_cache();  // nothing to do
  cuda::reset_peak_memory_stats();
  const cuda::MemoryStats s = cuda::memory_stats();
  CHECK(s.reserved_bytes == 0);
  CHECK(s.raw_allocs == 0);
  CHECK(cuda::pinned_memory_stats().reserved_bytes == 0);
}
