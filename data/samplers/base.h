// torch::data's Sampler: hands out the index batches of one epoch, one next() at a time;
// reset() starts the next epoch.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace gr::data::samplers {

template <typename BatchRequest = std::vector<size_t>>
class Sampler {
 public:
  using BatchRequestType = BatchRequest;

  virtual ~Sampler() = default;
  // Starts over (a new epoch), optionally for a dataset of `new_size` examples.
  virtual void reset(std::optional<size_t> new_size) = 0;
  // The next batch of at most `batch_size` indices; nothing once the epoch is over.
  virtual std::optional<BatchRequest> next(size_t batch_size) = 0;
};

}  // namespace gr::data::samplers
