// The loader's pin_memory and gr::pin_memory: with a CUDA device the batches are page-locked
// and hold the same values as ordinary ones; without one (this machine) the loader makes
// ordinary batches after a notice, and pin_memory() fails with a clear error.
#include <memory>

#include "core/cuda_memory.h"
#include "test_util.h"

using namespace gr;
namespace ds = gr::data::datasets;
namespace tf = gr::data::transforms;
namespace sp = gr::data::samplers;

namespace {

// Every batch of epoch 1 of `dataset` with pin_memory equals the batch without, and is
// pinned exactly when a device exists; with 0 and 2 workers.
template <class Dataset>
void check_same_batches(const Dataset& dataset) {
  const bool device = cuda_is_available();
  for (size_t workers : {0, 2}) {
    CAPTURE(workers);
    auto options = data::DataLoaderOptions(4).workers(workers);
    auto plain = data::make_data_loader(dataset, sp::RandomSampler(10, uint64_t{3}), options);
    auto pinned = data::make_data_loader(dataset, sp::RandomSampler(10, uint64_t{3}), options.pin_memory(true));
    std::vector<data::Example<>> expected;
    for (data::Example<>& a : plain->epoch(1)) expected.push_back(a);
    size_t k = 0;
    for (data::Example<>& b : pinned->epoch(1)) {
      REQUIRE(k < expected.size());
      CHECK(b.data.equal(expected[k].data));
      CHECK(b.target.equal(expected[k].target));
      CHECK(is_pinned(b.data) == device);
      CHECK(is_pinned(b.target) == device);
      ++k;
    }
    CHECK(k == expected.size());
  }
}

}  // namespace

TEST_CASE("loader pin_memory: pinned batches with a device, the same ordinary batches without") {
  ds::TensorDataset rows(randn({10, 3, 4, 4}), arange(10));
  check_same_batches(rows.map(tf::Stack<>()));  // gathered straight into pinned memory
  // A transform makes a new tensor after the gather: pinned after it.
  check_same_batches(rows.map(tf::Stack<>()).map(tf::Normalize<>(0.5, 2.0)));
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
