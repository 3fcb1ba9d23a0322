// make_data_loader and StatelessDataLoader: torch::data's loader of a dataset value through a
// sampler, made ahead by background workers (data/batch_queue.h) with batches that do not
// depend on the number of workers (Note [Batch determinism]):
//   auto loader = make_data_loader(MNIST(root).map(Stack<>()), DataLoaderOptions().batch_size(64).workers(2));
//   for (auto& batch : *loader) { ... }                 // each begin() is the next epoch
//   for (auto& batch : loader->epoch(e, k)) { ... }     // gradring: epoch e from batch k on
#pragma once

#include <any>
#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/cuda_memory.h"
#include "core/error.h"
#include "data/batch_context.h"
#include "data/batch_queue.h"
#include "data/dataloader_options.h"
#include "data/samplers/random.h"

namespace gr::data {

namespace detail {

// Batch types the loader can put in page-locked memory (pin_memory).
template <typename B>
constexpr bool kPinnable = std::is_same_v<B, Example<>> || std::is_same_v<B, TensorExample> || std::is_same_v<B, Tensor>;

// pin_memory of every tensor of a batch; no copy for those already pinned (Note [Row gather]).
template <typename B>
void pin(B& batch) {
  if constexpr (std::is_same_v<B, Tensor>) {
    batch = pin_memory(batch);
  } else {
    batch.data = pin_memory(batch.data);
    if constexpr (std::is_same_v<B, Example<>>) batch.target = pin_memory(batch.target);
  }
}

}  // namespace detail

// Each worker owns a copy of the dataset, so get_batch needs no locking (Note [Datasets are
// values]). One epoch runs at a time: starting one (begin(), or an Epoch's begin()) stops the
// workers of the one before, whose iterators are then invalid.
template <typename Dataset, typename Sampler>
class StatelessDataLoader {
 public:
  using BatchType = typename Dataset::BatchType;
  using BatchRequestType = typename Sampler::BatchRequestType;
  class Epoch;

  class Iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = BatchType;
    using difference_type = std::ptrdiff_t;
    using pointer = BatchType*;
    using reference = BatchType&;

    BatchType& operator*() { return *batch_; }
    BatchType* operator->() { return &*batch_; }
    Iterator& operator++() {
      GR_CHECK(loader_ != nullptr && index_ < end_, "DataLoader: iterator advanced past the end of the epoch");
      batch_.reset();  // release the old batch before making the next
      if (++index_ < end_) batch_ = loader_->take(generation_, epoch_, index_ - first_);
      return *this;
    }
    bool operator==(const Iterator& other) const { return index_ == other.index_; }
    int64_t index() const { return index_; }  // of the current batch in its epoch

   private:
    friend class StatelessDataLoader;
    Iterator(StatelessDataLoader* loader, int64_t generation, int64_t epoch, int64_t first, int64_t end, int64_t index)
        : loader_(loader), generation_(generation), epoch_(epoch), first_(first), end_(end), index_(index) {}
    StatelessDataLoader* loader_;
    int64_t generation_, epoch_, first_, end_, index_;
    std::optional<BatchType> batch_;
  };

  StatelessDataLoader(Dataset dataset, Sampler sampler, DataLoaderOptions options)
      : sampler_(std::move(sampler)), options_(std::move(options)) {
    GR_CHECK(options_.batch_size() >= 1, "DataLoader: batch_size must be >= 1, got ", options_.batch_size());
    GR_CHECK(options_.workers() == 0 || options_.capacity() >= 1, "DataLoader: max_jobs must be >= 1, got ",
             options_.capacity());
    GR_CHECK(!options_.timeout() || options_.timeout()->count() >= 0, "DataLoader: timeout must be >= 0");
    GR_CHECK(detail::kPinnable<BatchType> || !options_.pin_memory(),
             "DataLoader: pin_memory needs batches of tensors (map the dataset with transforms::Stack<>())");
    pin_ = detail::pin_batches(options_.pin_memory());
    const size_t copies = options_.workers() > 0 ? options_.workers() : 1;
    datasets_.reserve(copies);
    for (size_t i = 1; i < copies; ++i) datasets_.push_back(dataset);
    datasets_.push_back(std::move(dataset));
  }
  StatelessDataLoader(const StatelessDataLoader&) = delete;
  StatelessDataLoader& operator=(const StatelessDataLoader&) = delete;

  // Starts the next epoch: the one after the last started, 0 at first.
  Iterator begin() { return epoch(next_epoch_).begin(); }
  // The end of the epoch started last.
  Iterator end() { return Iterator(this, generation_, current_epoch_, 0, current_end_, current_end_); }

  // gradring: the batches [first, end) of epoch `epoch`, for a range-for; its begin() starts
  // the workers. The sampler's index batches are taken here (set_epoch(epoch), reset()), so
  // num_batches() is known before, and the first `first` batches are never made: resuming
  // mid-epoch costs nothing (Note [Sampler epochs]).
  Epoch epoch(int64_t epoch, int64_t first = 0) {
    GR_CHECK(epoch >= 0, "DataLoader: epoch must be >= 0, got ", epoch);
    if constexpr (requires(Sampler& s) { s.set_epoch(size_t{}); }) sampler_.set_epoch(static_cast<size_t>(epoch));
    sampler_.reset(std::nullopt);
    auto requests = std::make_shared<std::vector<BatchRequestType>>();
    while (std::optional<BatchRequestType> request = sampler_.next(options_.batch_size())) {
      if (options_.drop_last() && request->size() < options_.batch_size()) break;
      requests->push_back(std::move(*request));
    }
    const auto n = static_cast<int64_t>(requests->size());
    GR_CHECK(first >= 0 && first <= n, "DataLoader: first batch ", first, " out of range [0, ", n, "] for epoch ",
             epoch);
    return Epoch(this, epoch, first, std::move(requests));
  }

  // Stops the workers of the current epoch.
  void join() { queue_.reset(); }
  const DataLoaderOptions& options() const noexcept { return options_; }

 private:
  Iterator start(int64_t epoch, int64_t first, std::shared_ptr<const std::vector<BatchRequestType>> requests) {
    queue_.reset();  // joins the workers of the epoch before
    if constexpr (requires(Dataset& d) { d.set_epoch(int64_t{}); })
      for (Dataset& d : datasets_) d.set_epoch(epoch);
    const auto n = static_cast<int64_t>(requests->size());
    ++generation_;
    current_epoch_ = epoch;
    current_end_ = n;
    next_epoch_ = epoch + 1;
    queue_ = std::make_unique<detail::BatchQueue>(
        n - first, options_.workers(), options_.capacity(), options_.timeout(), epoch,
        [this, requests, epoch, first](int64_t k, size_t worker) {
          detail::BatchScope scope(options_.seed(), epoch, first + k, pin_);
          BatchType batch = datasets_[worker].get_batch((*requests)[static_cast<size_t>(first + k)]);
          if constexpr (detail::kPinnable<BatchType>)
            if (pin_) detail::pin(batch);
          return std::any(std::move(batch));
        });
    Iterator it(this, generation_, epoch, first, n, first);
    if (first < n) it.batch_ = take(generation_, epoch, 0);
    return it;
  }

  BatchType take(int64_t generation, int64_t epoch, int64_t k) {
    GR_CHECK(queue_ && generation == generation_, "DataLoader: an iterator of epoch ", epoch,
             " was used after begin() started epoch ", current_epoch_);
    return std::any_cast<BatchType&&>(queue_->take(k));
  }

  std::vector<Dataset> datasets_;  // one per worker (one for the consumer without workers)
  Sampler sampler_;
  DataLoaderOptions options_;
  bool pin_ = false;  // options_.pin_memory() and a CUDA device exists
  int64_t next_epoch_ = 0;
  int64_t generation_ = 0;  // epochs started; an iterator of an older one is stale
  int64_t current_epoch_ = -1, current_end_ = 0;
  std::unique_ptr<detail::BatchQueue> queue_;  // destroyed (workers joined) before the datasets
};

// The batches [first, num_batches()) of one epoch, from StatelessDataLoader::epoch; an input
// range (begin() once).
template <typename Dataset, typename Sampler>
class StatelessDataLoader<Dataset, Sampler>::Epoch {
 public:
  // Starts the workers (stopping the loader's epoch before); once.
  Iterator begin() {
    GR_CHECK(!begun_, "DataLoader: an Epoch's begin() can be called once; ask the loader for the epoch again");
    begun_ = true;
    return loader_->start(epoch_, first_, requests_);
  }
  Iterator end() const { return Iterator(loader_, 0, epoch_, first_, num_batches(), num_batches()); }
  // Batches of the whole epoch, the skipped first ones included.
  int64_t num_batches() const { return static_cast<int64_t>(requests_->size()); }
  int64_t epoch() const { return epoch_; }
  int64_t first() const { return first_; }

 private:
  friend class StatelessDataLoader;
  Epoch(StatelessDataLoader* loader, int64_t epoch, int64_t first,
        std::shared_ptr<const std::vector<BatchRequestType>> requests)
      : loader_(loader), epoch_(epoch), first_(first), requests_(std::move(requests)) {}
  StatelessDataLoader* loader_;
  int64_t epoch_, first_;
  std::shared_ptr<const std::vector<BatchRequestType>> requests_;
  bool begun_ = false;
};

template <typename Dataset, typename Sampler>
std::unique_ptr<StatelessDataLoader<Dataset, Sampler>> make_data_loader(Dataset dataset, Sampler sampler,
                                                                        DataLoaderOptions options) {
  return std::make_unique<StatelessDataLoader<Dataset, Sampler>>(std::move(dataset), std::move(sampler),
                                                                 std::move(options));
}

// With a sampler of type Sampler(dataset.size()); RandomSampler by default, as in libtorch.
template <typename Sampler = samplers::RandomSampler, typename Dataset,
          typename = std::enable_if_t<std::is_constructible_v<Sampler, size_t>>>
std::unique_ptr<StatelessDataLoader<Dataset, Sampler>> make_data_loader(Dataset dataset,
                                                                        DataLoaderOptions options = DataLoaderOptions()) {
  const std::optional<size_t> size = dataset.size();
  GR_CHECK(size.has_value(), "make_data_loader: the dataset has no size, which the sampler needs");
  Sampler sampler(*size);
  return make_data_loader(std::move(dataset), std::move(sampler), std::move(options));
}

}  // namespace gr::data
