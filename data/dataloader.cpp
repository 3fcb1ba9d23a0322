// DataLoader: making one batch (row gather or get + stack, then the transform); the
// prefetch queue (data/batch_queue.h) runs the workers.
#include "data/dataloader.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <span>
#include <vector>

#include "core/cuda_memory.h"
#include "core/factory.h"
#include "core/native/copy/copy.h"
#include "core/native/shape/shape.h"
#include "core/version.h"
#include "data/batch_queue.h"

namespace gr::data {

namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// The transform generator's seed for batch `index` of `epoch`. See Note [Batch determinism].
uint64_t batch_seed(uint64_t seed, int64_t epoch, int64_t index) {
  return splitmix64(splitmix64(splitmix64(seed) ^ static_cast<uint64_t>(epoch)) ^ static_cast<uint64_t>(index));
}

// Rows `indices` of a contiguous CPU tensor [N, ...], one memcpy per row (into pinned
// memory when `pinned`).
Tensor gather_rows(const Tensor& t, std::span<const int64_t> indices, bool pinned) {
  std::vector<int64_t> sizes = t.sizes().vec();
  const int64_t n = sizes[0];
  sizes[0] = static_cast<int64_t>(indices.size());
  Tensor out = pinned ? empty_pinned(sizes, t.scalar_type()) : empty(sizes, t.scalar_type());
  const size_t row_bytes = n == 0 ? 0 : t.nbytes() / n;
  const char* src = static_cast<const char*>(t.data_ptr());
  char* dst = static_cast<char*>(out.data_ptr());
  for (size_t i = 0; i < indices.size(); ++i) {
    const int64_t row = indices[i];
    GR_CHECK(row >= 0 && row < n, "DataLoader: sampler index ", row, " out of range for a dataset of ", n, " examples");
    std::memcpy(dst + i * row_bytes, src + row * row_bytes, row_bytes);
  }
  return out;
}

}  // namespace

struct DataLoader::Impl {
  std::shared_ptr<const Dataset> dataset;
  DataLoaderOptions options;
  std::shared_ptr<const Sampler> sampler;
  std::optional<Example<>> rows;  // contiguous CPU data/targets, when the dataset has them
  bool pin = false;             // options.pin_memory and a CUDA device exists

  int64_t num_batches() const {
    const int64_t n = sampler->size(), b = static_cast<int64_t>(options.batch_size());
    return options.drop_last() ? n / b : (n + b - 1) / b;
  }

  Example<> make_batch(int64_t epoch, const std::vector<int64_t>& order, int64_t index) const {
    const auto batch_size = static_cast<int64_t>(options.batch_size());
    const int64_t begin = index * batch_size;
    const int64_t end = std::min<int64_t>(begin + batch_size, static_cast<int64_t>(order.size()));
    std::span<const int64_t> indices(order.data() + begin, static_cast<size_t>(end - begin));
    Example<> batch;
    if (rows) {
      batch = {gather_rows(rows->data, indices, pin && !options.transform()), gather_rows(rows->target, indices, pin)};
    } else {
      TensorList data, targets;
      for (int64_t i : indices) {
        Example<> e = dataset->get(i);
        data.push_back(std::move(e.data));
        targets.push_back(std::move(e.target));
      }
      batch = {native::stack(data, 0), native::stack(targets, 0)};
    }
    if (options.transform()) {
      Generator gen(batch_seed(options.seed(), epoch, index));
      batch.data = (*options.transform())(batch.data, &gen);
    }
    if (pin) batch = {pin_memory(batch.data), pin_memory(batch.target)};  // no copy if already pinned
    return batch;
  }
};

DataLoader::DataLoader(std::shared_ptr<const Dataset> dataset, DataLoaderOptions options) {
  GR_CHECK(dataset != nullptr, "DataLoader: dataset is null");
  GR_CHECK(options.batch_size() >= 1, "DataLoader: batch_size must be >= 1, got ", options.batch_size());
  GR_CHECK(options.workers() == 0 || options.capacity() >= 1, "DataLoader: max_jobs must be >= 1, got ",
           options.capacity());
  GR_CHECK(!options.timeout() || options.timeout()->count() >= 0, "DataLoader: timeout must be >= 0");
  GR_CHECK(!(options.shuffle() && options.sampler()), "DataLoader: shuffle and sampler exclude each other ",
           "(shuffle means RandomSampler(dataset size, seed))");
  auto impl = std::make_shared<Impl>();
  impl->sampler = options.sampler();
  if (!impl->sampler && options.shuffle())
    impl->sampler = std::make_shared<RandomSampler>(dataset->size(), options.seed());
  if (!impl->sampler) impl->sampler = std::make_shared<SequentialSampler>(dataset->size());
  if (std::optional<Example<>> rows = dataset->as_tensors(); rows && rows->data.is_cpu() && rows->target.is_cpu()) {
    GR_CHECK(rows->data.dim() >= 1 && rows->target.dim() >= 1 && rows->data.size(0) == rows->target.size(0),
             "DataLoader: the dataset's tensors ", rows->data.toString(), " and ", rows->target.toString(),
             " do not have the same number of rows");
    impl->rows = Example<>{native::contiguous(rows->data), native::contiguous(rows->target)};
  }
  if (options.pin_memory()) {
    impl->pin = cuda_is_available();
    static std::once_flag notice;
    if (!impl->pin)
      std::call_once(notice, [] {
        std::fprintf(stderr, "gradring: DataLoader pin_memory=true but no CUDA device is available; batches stay in pageable memory\n");
      });
  }
  impl->dataset = std::move(dataset);
  impl->options = std::move(options);
  impl_ = std::move(impl);
}

int64_t DataLoader::size() const { return impl_->num_batches(); }
const DataLoaderOptions& DataLoader::options() const { return impl_->options; }
const Sampler& DataLoader::sampler() const { return *impl_->sampler; }
const Dataset& DataLoader::dataset() const { return *impl_->dataset; }

Example<> DataLoader::batch(int64_t epoch, int64_t index) const {
  GR_CHECK(index >= 0 && index < size(), "DataLoader: batch ", index, " out of range [0, ", size(), ")");
  return impl_->make_batch(epoch, impl_->sampler->indices(epoch), index);
}

// ---- one epoch ----

struct DataLoader::Epoch::State {
  std::shared_ptr<const Impl> impl;
  std::shared_ptr<const std::vector<int64_t>> order;
  detail::BatchQueue queue;
  bool begun = false;

  State(std::shared_ptr<const Impl> impl_, int64_t epoch)
      : impl(std::move(impl_)),
        order(std::make_shared<const std::vector<int64_t>>(impl->sampler->indices(epoch))),
        queue(impl->num_batches(), impl->options.workers(), impl->options.capacity(), impl->options.timeout(), epoch,
              [impl = impl, order = order, epoch](int64_t k, size_t) { return std::any(impl->make_batch(epoch, *order, k)); }) {}

  Example<> take(int64_t k) { return std::any_cast<Example<>&&>(queue.take(k)); }
};

DataLoader::Epoch DataLoader::epoch(int64_t epoch) const { return Epoch(std::make_unique<Epoch::State>(impl_, epoch)); }

DataLoader::Epoch::Epoch(std::unique_ptr<State> state) : state_(std::move(state)) {}
DataLoader::Epoch::Epoch(Epoch&&) noexcept = default;
DataLoader::Epoch::~Epoch() = default;
DataLoader::Epoch& DataLoader::Epoch::operator=(Epoch&&) noexcept = default;

int64_t DataLoader::Epoch::size() const { return state_->queue.size(); }

DataLoader::Epoch::Iterator DataLoader::Epoch::begin() {
  GR_CHECK(state_ != nullptr, "DataLoader::Epoch: moved from");
  GR_CHECK(!state_->begun, "DataLoader::Epoch: begin() can be called once; ask the loader for a new epoch");
  state_->begun = true;
  Iterator it(state_.get(), 0);
  if (state_->queue.size() > 0) it.batch_ = state_->take(0);
  return it;
}

DataLoader::Epoch::Iterator DataLoader::Epoch::end() { return Iterator(state_.get(), state_->queue.size()); }

DataLoader::Epoch::Iterator& DataLoader::Epoch::Iterator::operator++() {
  GR_CHECK(index_ < state_->queue.size(), "DataLoader: iterator advanced past the end of the epoch");
  batch_ = Example<>{};  // release the old batch before making the next
  if (++index_ < state_->queue.size()) batch_ = state_->take(index_);
  return *this;
}

}  // namespace gr::data
