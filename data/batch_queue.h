// BatchQueue: the engine under every data loader; worker threads make the batches of one
// epoch ahead of the consumer, who takes them in order. See Note [Batch determinism].
#pragma once

#include <any>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

namespace gr::data::detail {

class BatchQueue {
 public:
  // make(k, worker) makes batch k; `worker` in [0, max(workers, 1)) says which thread asks
  // (0 for the consumer when workers == 0), so a loader can give each thread its own copy
  // of a dataset. At most `capacity` (>= 1 when workers > 0) batches wait made. `epoch`
  // goes into error messages.
  using MakeBatch = std::function<std::any(int64_t batch, size_t worker)>;
  BatchQueue(int64_t num_batches, size_t workers, size_t capacity, std::optional<std::chrono::milliseconds> timeout,
             int64_t epoch, MakeBatch make);
  BatchQueue(const BatchQueue&) = delete;
  BatchQueue& operator=(const BatchQueue&) = delete;
  ~BatchQueue();  // stops and joins the workers, also mid-epoch

  int64_t size() const;  // batches in the epoch
  // Batch k, the next one in order (k = 0, 1, ...). An exception while making it is
  // rethrown here, unchanged, and ends the epoch.
  std::any take(int64_t k);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace gr::data::detail
