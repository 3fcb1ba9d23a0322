// QueuedProcessGroup: the part of CPU backends that makes collectives asynchronous. Each
// collective becomes a job on one worker thread, run strictly in issue order (the order
// every rank must agree on), so the caller keeps computing while it communicates.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "distributed/process_group.h"

namespace gr::distributed {

class QueuedProcessGroup : public ProcessGroup {
 public:
  QueuedProcessGroup(int rank, int size);
  // Finishes the queued collectives, then stops the worker thread.
  ~QueuedProcessGroup() override;

 protected:
  // Runs `job` on the worker thread after every collective issued before it. The Work
  // completes when the job returns (result = `outputs`) or throws (the error).
  WorkPtr enqueue(std::string description, std::vector<Tensor> outputs, std::function<void()> job);
  // "gloo allreduce (sum) float32 [1000] #17 on rank 0": for errors and debug logs.
  std::string describe(const char* op, const Tensor& t, const char* detail = nullptr);
  // Stops the worker thread (call from the derived destructor, before its state dies).
  void shutdown();

 private:
  struct Job {
    WorkPtr work;
    std::function<void()> run;
  };
  void loop();

  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Job> queue_;
  bool stopping_ = false;
  uint64_t sequence_ = 0;
  std::thread worker_;
};

}  // namespace gr::distributed
