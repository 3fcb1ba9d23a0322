// BatchQueue: the bounded prefetch queue that worker threads fill in batch order.
#include "data/batch_queue.h"

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "core/error.h"

namespace gr::data::detail {

// Workers claim batches in order, at most `capacity` ahead of the consumer; batch k goes to
// slot k % capacity, which the consumer has emptied by then (k - capacity < next_take).
struct BatchQueue::State {
  struct Slot {
    bool ready = false;
    std::any batch;
    std::exception_ptr error;
  };

  int64_t num_batches;
  std::optional<std::chrono::milliseconds> timeout;
  int64_t epoch;
  MakeBatch make;

  std::mutex mutex;
  std::condition_variable ready_cv;  // a slot was filled
  std::condition_variable space_cv;  // a slot was emptied, or stop
  std::vector<Slot> slots;
  int64_t next_claim = 0, next_take = 0;
  bool stop = false;
  std::vector<std::thread> workers;

  State(int64_t num_batches_, size_t num_workers, size_t capacity, std::optional<std::chrono::milliseconds> timeout_,
        int64_t epoch_, MakeBatch make_)
      : num_batches(num_batches_), timeout(timeout_), epoch(epoch_), make(std::move(make_)) {
    GR_CHECK(!timeout || timeout->count() >= 0, "DataLoader: timeout must be >= 0");
    const auto threads = static_cast<size_t>(std::min<int64_t>(static_cast<int64_t>(num_workers), num_batches));
    if (threads == 0) return;
    GR_CHECK(capacity >= 1, "DataLoader: max_jobs must be >= 1 with workers, got ", capacity);
    slots.resize(capacity);
    try {
      for (size_t i = 0; i < threads; ++i) workers.emplace_back([this, i] { work(i); });
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

  void work(size_t worker) {
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
        slot.batch = make(k, worker);
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

  std::any take(int64_t k) {
    GR_CHECK(k == next_take && k < num_batches, "DataLoader: batch ", k, " taken out of order (next: ", next_take,
             " of ", num_batches, ")");
    if (workers.empty()) {
      ++next_take;
      return make(k, 0);
    }
    std::unique_lock lock(mutex);
    GR_CHECK(!stop, "DataLoader: epoch ", epoch, " stopped after an error in batch ", next_take - 1);
    Slot& slot = slots[k % slots.size()];
    auto ready = [&] { return slot.ready; };
    if (timeout && timeout->count() > 0) {
      GR_CHECK(ready_cv.wait_for(lock, *timeout, ready), "DataLoader: batch ", k, " of epoch ", epoch,
               " not ready after ", timeout->count(), " ms (workers ", workers.size(), ")");
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

BatchQueue::BatchQueue(int64_t num_batches, size_t workers, size_t capacity,
                       std::optional<std::chrono::milliseconds> timeout, int64_t epoch, MakeBatch make)
    : state_(std::make_unique<State>(num_batches, workers, capacity, timeout, epoch, std::move(make))) {}

BatchQueue::~BatchQueue() = default;

int64_t BatchQueue::size() const { return state_->num_batches; }

std::any BatchQueue::take(int64_t k) { return state_->take(k); }

}  // namespace gr::data::detail
