// torch::data's dataset interfaces: BatchDataset (a batch per request of indices), Dataset<Self>
// (one example per index, CRTP) and .map(transform); and the train/test Mode of the readers.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "data/example.h"

namespace gr::data::datasets {

// Note [Datasets are values]
// A dataset is a value: a loader copies it, one copy per worker (so get() needs no locking),
// and .map() wraps it in a new type, so a whole pipeline is one type the compiler sees
// through. Readers keep their data in tensors or shared buffers, so a copy is cheap. Two
// optional members, which gradring's loader looks for: rows() (Note [Row gather] in
// data/batch_context.h) and set_epoch(e), which the loader calls on every copy before
// epoch e (Note [Batch determinism]).

// Which split of a dataset that comes with a train/test split to read.
enum class Mode { kTrain, kTest };

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
