// DataLoader: making one batch (row gather or get + stack, then the transform), and the
// bounded prefetch queue that worker threads fill in batch order.
#include "data/dataloader.h"

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <exception>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "core/cuda_memory.h"
#include "core/factory.h"
#include "core/native/copy.h"
#include "core/native/shape.h"
#include "core/version.h"

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
  std::optional<Example> rows;  // contiguous CPU data/targets, when the dataset has them
  bool pin = false;             // options.pin_memory and a CUDA device exists

  int64_t num_batches() const {
    const int64_t n = sampler->size(), b = options.batch_size;
    return options.drop_last ? n / b : (n + b - 1) / b;
  }

  Example make_batch(int64_t epoch, const std::vector<int64_t>& order, int64_t index) const {
    const int64_t begin = index * options.batch_size;
    const int64_t end = std::min<int64_t>(begin + options.batch_size, static_cast<int64_t>(order.size()));
    std::span<const int64_t> indices(order.data() + begin, static_cast<size_t>(end - begin));
    Example batch;
    if (rows) {
      batch = {gather_rows(rows->data, indices, pin && !options.transform), gather_rows(rows->target, indices, pin)};
    } else {
      TensorList data, targets;
      for (int64_t i : indices) {
        Example e = dataset->get(i);
        data.push_back(std::move(e.data));
        targets.push_back(std::move(e.target));
      }
      batch = {native::stack(data, 0), native::stack(targets, 0)};
    }
    if (options.transform) {
      Generator gen(batch_seed(options.seed, epoch, index));
      batch.data = (*options.transform)(batch.data, &gen);
    }
    if (pin) batch = {pin_memory(batch.data), pin_memory(batch.target)};  // no copy if already pinned
    return batch;
  }
};

DataLoader::DataLoader(std::shared_ptr<const Dataset> dataset, DataLoaderOptions options) {
  GR_CHECK(dataset != nullptr, "DataLoader: dataset is null");
  GR_CHECK(options.batch_size >= 1, "DataLoader: batch_size must be >= 1, got ", options.batch_size);
  GR_CHECK(options.num_workers >= 0, "DataLoader: num_workers must be >= 0, got ", options.num_workers);
  GR_CHECK(options.prefetch_factor >= 1, "DataLoader: prefetch_factor must be >= 1, got ", options.prefetch_factor);
  GR_CHECK(options.timeout.count() >= 0, "DataLoader: timeout must be >= 0");
  GR_CHECK(!(options.shuffle && options.sampler), "DataLoader: shuffle and sampler exclude each other ",
           "(shuffle means RandomSampler(dataset size, seed))");
  auto impl = std::make_shared<Impl>();
  impl->sampler = options.sampler;
  if (!impl->sampler && options.shuffle) impl->sampler = std::make_shared<RandomSampler>(dataset->size(), options.seed);
  if (!impl->sampler) impl->sampler = std::make_shared<SequentialSampler>(dataset->size());
  if (std::optional<Example> rows = dataset->as_tensors(); rows && rows->data.is_cpu() && rows->target.is_cpu()) {
    GR_CHECK(rows->data.dim() >= 1 && rows->target.dim() >= 1 && rows->data.size(0) == rows->target.size(0),
             "DataLoader: the dataset's tensors ", rows->data.toString(), " and ", rows->target.toString(),
             " do not have the same number of rows");
    impl->rows = Example{native::contiguous(rows->data), native::contiguous(rows->target)};
  }
  if (options.pin_memory) {
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

Example DataLoader::batch(int64_t epoch, int64_t index) const {
  GR_CHECK(index >= 0 && index < size(), "DataLoader: batch ", index, " out of range [0, ", size(), ")");
  return impl_->make_batch(epoch, impl_->sampler->indices(epoch), index);
}

// ---- one epoch: the prefetch queue ----

// Workers claim batches in order, at most `capacity` ahead of the consumer; batch k goes to
// slot k % capacity, which the consumer has emptied by then (k - capacity < next_take).
struct DataLoader::Epoch::State {
  struct Slot {
    bool ready = false;
    Example batch;
    std::exception_ptr error;
  };

  std::shared_ptr<const Impl> impl;
  int64_t epoch;
  std::vector<int64_t> order;
  int64_t num_batches;
  bool begun = false;

  std::mutex mutex;
  std::condition_variable ready_cv;  // a slot was filled
  std::condition_variable space_cv;  // a slot was emptied, or stop
  std::vector<Slot> slots;
  int64_t next_claim = 0, next_take = 0;
  bool stop = false;
  std::vector<std::thread> workers;

  State(std::shared_ptr<const Impl> impl_, int64_t epoch_)
      : impl(std::move(impl_)), epoch(epoch_), order(impl->sampler->indices(epoch)), num_batches(impl->num_batches()) {
    const int64_t threads = std::min(impl->options.num_workers, num_batches);
    if (threads == 0) return;
    slots.resize(static_cast<size_t>(impl->options.num_workers * impl->options.prefetch_factor));
    try {
      for (int64_t i = 0; i < threads; ++i) workers.emplace_back([this] { work(); });
    } catch (...) {  // could not start a thread: stop those that did start
      shutdown();
      throw;
    }
  }

  ~State() { shutdown(); }

  void shutdown() {
    {
      std::lock_guard lock(mutex);
      stop = true;
    }
    space_cv.notify_all();
    for (std::thread& t : workers) t.join();
    workers.clear();
  }

  void work() {
    const auto capacity = static_cast<int64_t>(slots.size());
    for (;;) {
      int64_t k;
      {
        std::unique_lock lock(mutex);
        space_cv.wait(lock, [&] { return stop || next_claim >= num_batches || next_claim < next_take + capacity; });
        if (stop || next_claim >= num_batches) return;
        k = next_claim++;
      }
      Slot slot{true, {}, nullptr};
      try {
        slot.batch = impl->make_batch(epoch, order, k);
      } catch (...) {
        slot.error = std::current_exception();
      }
      {
        std::lock_guard lock(mutex);
        slots[k % capacity] = std::move(slot);
      }
      ready_cv.notify_one();
    }
  }

  // Batch k, the next one in order.
  Example take(int64_t k) {
    if (workers.empty()) return impl->make_batch(epoch, order, k);
    std::unique_lock lock(mutex);
    GR_CHECK(!stop, "DataLoader: epoch ", epoch, " stopped after an error in batch ", next_take - 1);
    Slot& slot = slots[k % slots.size()];
    auto ready = [&] { return slot.ready; };
    const auto timeout = impl->options.timeout;
    if (timeout.count() > 0) {
      GR_CHECK(ready_cv.wait_for(lock, timeout, ready), "DataLoader: batch ", k, " of epoch ", epoch,
               " not ready after ", timeout.count(), " ms (num_workers ", workers.size(), ")");
    } else {
      ready_cv.wait(lock, ready);
    }
    Slot taken = std::move(slot);
    slot = Slot{};
    ++next_take;
    if (taken.error) stop = true;  // the epoch ends here: stop the workers early
    lock.unlock();
    space_cv.notify_all();
    if (taken.error) std::rethrow_exception(taken.error);
    return std::move(taken.batch);
  }
};

DataLoader::Epoch DataLoader::epoch(int64_t epoch) const { return Epoch(std::make_unique<Epoch::State>(impl_, epoch)); }

DataLoader::Epoch::Epoch(std::unique_ptr<State> state) : state_(std::move(state)) {}
DataLoader::Epoch::Epoch(Epoch&&) noexcept = default;
DataLoader::Epoch::~Epoch() = default;
DataLoader::Epoch& DataLoader::Epoch::operator=(Epoch&&) noexcept = default;

int64_t DataLoader::Epoch::size() const { return state_->num_batches; }

DataLoader::Epoch::Iterator DataLoader::Epoch::begin() {
  GR_CHECK(state_ != nullptr, "DataLoader::Epoch: moved from");
  GR_CHECK(!state_->begun, "DataLoader::Epoch: begin() can be called once; ask the loader for a new epoch");
  state_->begun = true;
  Iterator it(state_.get(), 0);
  if (state_->num_batches > 0) it.batch_ = state_->take(0);
  return it;
}

DataLoader::Epoch::Iterator DataLoader::Epoch::end() { return Iterator(state_.get(), state_->num_batches); }

DataLoader::Epoch::Iterator& DataLoader::Epoch::Iterator::operator++() {
  GR_CHECK(index_ < state_->num_batches, "DataLoader: iterator advanced past the end of the epoch");
  batch_ = Example{};  // release the old batch before making the next
  if (++index_ < state_->num_batches) batch_ = state_->take(index_);
  return *this;
}

}  // namespace gr::data
