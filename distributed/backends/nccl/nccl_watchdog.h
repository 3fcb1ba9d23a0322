// Watchdog: the thread of an NCCL group that watches its collectives in flight. It finishes
// each work when its end event has completed (and only then drops the tensors the
// collective used), and when the oldest one runs past the group's timeout, or NCCL reports
// an asynchronous error, it aborts the communicator (in-flight kernels exit, so no stream
// stays stuck on a dead peer) and fails every waiting work with an error naming the
// collective and the timeout.
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/tensor.h"
#include "distributed/backends/nccl/nccl_comm.h"
#include "distributed/backends/nccl/nccl_work.h"

namespace gr::distributed::nccl {

class Watchdog {
 public:
  Watchdog(int rank, int size, std::shared_ptr<Health> health);
  ~Watchdog();  // stop()
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // Starts the thread, once the group's communicator exists.
  void start(std::shared_ptr<Comm> comm, int device);
  // A collective just issued (its end event recorded); `keep_alive` holds every tensor it
  // reads or writes until it has completed on the GPU.
  void add(std::shared_ptr<NCCLWork> work, std::vector<Tensor> keep_alive);
  // Finishes, in issue order, the works whose events have completed. Any thread.
  void poll();
  // Polls until nothing is in flight (true) or `limit` has passed (false).
  bool drain(std::chrono::milliseconds limit);
  void stop();
  size_t in_flight() const;
  // Records the failure (the first one wins), aborts the communicator, and fails every
  // unfinished work with it.
  void fail(const std::string& message);

 private:
  struct Entry {
    std::shared_ptr<NCCLWork> work;
    std::vector<Tensor> keep_alive;
    bool failed = false;  // finished with the group's failure; kept until its event completes
  };
  void loop();
  void check_timeout_and_async_error();

  const int rank_, size_;
  std::shared_ptr<Health> health_;
  std::shared_ptr<Comm> comm_;
  int device_ = -1;

  mutable std::mutex mutex_;         // entries_, stop_
  std::recursive_mutex poll_mutex_;  // one poll at a time (a then() callback may synchronize)
  std::condition_variable cv_;
  std::deque<Entry> entries_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace gr::distributed::nccl
