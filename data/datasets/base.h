// torch::data's dataset interfaces: BatchDataset (a batch per request of indices), Dataset<Self>
// (one example per index, CRTP) and .map(transform). See Note [Two dataset interfaces].
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "data/example.h"

namespace gr::data::datasets {

// Note [Two dataset interfaces]
// torch::data's datasets (this folder) are values: a loader copies them, one copy per worker,
// and .map() wraps them in new types, so a whole pipeline is one type that the compiler
// sees through. gradring's own DataLoader (data/dataloader.h) takes a polymorphic
// gr::data::Dataset behind a shared_ptr and stacks the examples itself. Both run on the same
// engine, detail::BatchQueue (data/batch_queue.h), and the concrete datasets (MNIST) share
// their readers.

template <typename D, typename T>
class MapDataset;
template <typename D, typename T>
MapDataset<D, T> map(D dataset, T transform);

// A dataset that returns a whole batch for a request of indices (from a sampler).
template <typename Self, typename Batch = std::vector<Example<>>, typename BatchRequest = std::span<const size_t>>
class BatchDataset {
 public:
  using SelfType = Self;
  using BatchType = Batch;
  using BatchRequestType = BatchRequest;
  constexpr static bool is_stateful = false;

  virtual ~BatchDataset() = default;
  virtual Batch get_batch(BatchRequest request) = 0;
  // Number of examples, if known.
  virtual std::optional<size_t> size() const = 0;

  // A dataset that applies `transform` to every batch of this one (a copy of it).
  template <typename TransformType>
  MapDataset<Self, TransformType> map(TransformType transform) & {
    return datasets::map(static_cast<Self&>(*this), std::move(transform));
  }
  template <typename TransformType>
  MapDataset<Self, TransformType> map(TransformType transform) && {
    return datasets::map(std::move(static_cast<Self&>(*this)), std::move(transform));
  }
};

// A dataset of single examples: implement get(index) and size(); a batch is the examples of
// its indices, in order.
template <typename Self, typename SingleExample = Example<>>
class Dataset : public BatchDataset<Self, std::vector<SingleExample>> {
 public:
  using ExampleType = SingleExample;

  virtual ExampleType get(size_t index) = 0;

  std::vector<ExampleType> get_batch(std::span<const size_t> indices) override {
    std::vector<ExampleType> batch;
    batch.reserve(indices.size());
    for (size_t i : indices) batch.push_back(get(i));
    return batch;
  }
};

}  // namespace gr::data::datasets
