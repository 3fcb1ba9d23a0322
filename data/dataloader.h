// DataLoader: batches of a Dataset in a sampler's order, with optional transforms, made on
// the caller's thread or prepared ahead by background threads. See Note [Batch determinism].
#pragma once

#include <cstddef>
#include <iterator>
#include <memory>

#include "data/dataloader_options.h"
#include "data/dataset.h"
#include "data/sampler.h"
#include "data/transforms.h"

namespace gr::data {

// Note [Batch determinism]
// Batch k of epoch e holds the examples sampler.indices(e)[k*B, (k+1)*B), stacked, and its
// random transforms draw from a Generator seeded from (seed, e, k) alone. Workers only decide
// *when* a batch is made, never what it holds: the batches are identical for any number of workers.

class DataLoader {
 public:
  class Epoch;

  // Datasets are read from several threads when workers > 0: get() must be safe to call
  // concurrently (as a const method that only reads).
  explicit DataLoader(std::shared_ptr<const Dataset> dataset, DataLoaderOptions options = {});

  // Batches per epoch.
  int64_t size() const;
  const DataLoaderOptions& options() const;
  const Sampler& sampler() const;
  const Dataset& dataset() const;

  // The batches of epoch `epoch`, for a range-for:
  //   for (Example<>& batch : loader.epoch(e)) { ... }   // batch.data [B, ...], batch.target [B, ...]
  // Workers start here and stop when the Epoch is destroyed, also mid-epoch. An exception
  // while making a batch is rethrown (unchanged) when the consumer reaches that batch.
  Epoch epoch(int64_t epoch) const;
  // Batch `index` of epoch `epoch`, made on the calling thread (as the workers make it).
  Example<> batch(int64_t epoch, int64_t index) const;

 private:
  struct Impl;
  std::shared_ptr<const Impl> impl_;
};

// One pass over the batches; an input range (begin() once).
class DataLoader::Epoch {
  struct State;

 public:
  class Iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = Example<>;
    using difference_type = std::ptrdiff_t;
    using pointer = Example<>*;
    using reference = Example<>&;

    Example<>& operator*() { return batch_; }
    Example<>* operator->() { return &batch_; }
    Iterator& operator++();  // makes or waits for the next batch
    bool operator==(const Iterator& other) const { return index_ == other.index_; }
    int64_t index() const { return index_; }  // of the current batch

   private:
    friend class Epoch;
    Iterator(State* state, int64_t index) : state_(state), index_(index) {}
    State* state_;
    int64_t index_;
    Example<> batch_;
  };

  Epoch(Epoch&&) noexcept;
  Epoch& operator=(Epoch&&) noexcept;
  ~Epoch();  // stops and joins the workers

  Iterator begin();
  Iterator end();
  int64_t size() const;  // batches

 private:
  friend class DataLoader;
  explicit Epoch(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace gr::data
