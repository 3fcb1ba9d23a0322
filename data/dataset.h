// Dataset: the interface every data source implements (size and one example by index).
#pragma once

#include <cstdint>
#include <optional>

#include "data/example.h"

namespace gr::data {

// Which split of a dataset that comes with a train/test split to load.
enum class Mode { kTrain, kTest };

class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual int64_t size() const = 0;
  // Example `index` in [0, size()); out-of-range indices throw gr::Error.
  virtual Example<> get(int64_t index) const = 0;
  // A dataset whose examples are the rows of two tensors (data [N, ...], targets [N, ...])
  // returns them, so a DataLoader can gather a batch with one copy per tensor instead of
  // one get() per example. Others return nothing.
  virtual std::optional<Example<>> as_tensors() const { return std::nullopt; }
};

}  // namespace gr::data
