// make_data_loader and StatelessDataLoader: torch::data's loader of a dataset value through a
// sampler, on gradring's engine (data/batch_queue.h; Note [Batch determinism]):
//   auto loader = make_data_loader(std::move(dataset), DataLoaderOptions().batch_size(64).workers(2));
//   for (auto& batch : *loader) { ... }
#pragma once

#include <any>
#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/error.h"
#include "data/batch_queue.h"
#include "data/dataloader_options.h"
#include "data/samplers/random.h"

namespace gr::data {

// Each begin() is an epoch: it resets the sampler, takes all its index batches (dropping a
// short last one with drop_last), and starts the workers; each worker owns a copy of the
// dataset, so get_batch needs no locking. Batch k is dataset.get_batch(request k) whichever
// thread makes it, and batches arrive in order. Iterators of an earlier epoch are invalid
// after the next begin().
template <typename Dataset, typename Sampler>
class StatelessDataLoader {
 public:
  using BatchType = typename Dataset::BatchType;
  using BatchRequestType = typename Sampler::BatchRequestType;

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
      GR_CHECK(loader_ != nullptr && index_ < loader_->num_batches(),
               "DataLoader: iterator advanced past the end of the epoch");
      batch_.reset();  // release the old batch before making the next
      if (++index_ < loader_->num_batches()) batch_ = loader_->take(epoch_, index_);
      return *this;
    }
    bool operator==(const Iterator& other) const { return index_ == other.index_; }

   private:
    friend class StatelessDataLoader;
    Iterator(StatelessDataLoader* loader, int64_t epoch, int64_t index) : loader_(loader), epoch_(epoch), index_(index) {}
    StatelessDataLoader* loader_;
    int64_t epoch_;
    int64_t index_;
    std::optional<BatchType> batch_;
  };

  StatelessDataLoader(Dataset dataset, Sampler sampler, DataLoaderOptions options)
      : sampler_(std::move(sampler)), options_(std::move(options)) {
    GR_CHECK(options_.batch_size() >= 1, "DataLoader: batch_size must be >= 1, got ", options_.batch_size());
    GR_CHECK(options_.workers() == 0 || options_.capacity() >= 1, "DataLoader: max_jobs must be >= 1, got ",
             options_.capacity());
    GR_CHECK(!options_.sampler() && !options_.shuffle() && !options_.transform(),
             "make_data_loader: the options sampler, shuffle and transform belong to gradring's DataLoader; pass a "
             "sampler as make_data_loader's argument and transforms with dataset.map()");
    const size_t copies = options_.workers() > 0 ? options_.workers() : 1;
    datasets_.reserve(copies);
    for (size_t i = 1; i < copies; ++i) datasets_.push_back(dataset);
    datasets_.push_back(std::move(dataset));
  }
  StatelessDataLoader(const StatelessDataLoader&) = delete;
  StatelessDataLoader& operator=(const StatelessDataLoader&) = delete;

  // Starts an epoch (stopping the previous one's workers).
  Iterator begin() {
    queue_.reset();
    sampler_.reset(std::nullopt);
    auto requests = std::make_shared<std::vector<BatchRequestType>>();
    while (std::optional<BatchRequestType> request = sampler_.next(options_.batch_size())) {
      if (options_.drop_last() && request->size() < options_.batch_size()) break;
      requests->push_back(std::move(*request));
    }
    const int64_t epoch = epoch_++;
    queue_ = std::make_unique<detail::BatchQueue>(
        static_cast<int64_t>(requests->size()), options_.workers(), options_.capacity(), options_.timeout(), epoch,
        [this, requests](int64_t k, size_t worker) { return std::any(datasets_[worker].get_batch((*requests)[k])); });
    Iterator it(this, epoch, 0);
    if (num_batches() > 0) it.batch_ = take(epoch, 0);
    return it;
  }
  Iterator end() { return Iterator(this, epoch_ - 1, num_batches()); }

  // Stops the workers of the current epoch.
  void join() { queue_.reset(); }
  const DataLoaderOptions& options() const noexcept { return options_; }

 private:
  int64_t num_batches() const { return queue_ ? queue_->size() : 0; }
  BatchType take(int64_t epoch, int64_t k) {
    GR_CHECK(queue_ && epoch == epoch_ - 1, "DataLoader: an iterator of epoch ", epoch,
             " was used after begin() started epoch ", epoch_ - 1);
    return std::any_cast<BatchType&&>(queue_->take(k));
  }

  std::vector<Dataset> datasets_;  // one per worker (one for the consumer without workers)
  Sampler sampler_;
  DataLoaderOptions options_;
  int64_t epoch_ = 0;                         // epochs begun
  std::unique_ptr<detail::BatchQueue> queue_;  // destroyed (workers joined) before the datasets
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
