// QueuedProcessGroup: the part of CPU backends that makes collectives asynchronous. Each
// collective becomes a job for the group's worker threads, started strictly in issue order
// (the order every rank must agree on), so the caller keeps computing while it communicates.
// With one worker (MPI) jobs also run one at a time; with more (Gloo uses 2, as torch does)
// consecutive collectives overlap, each under its own tag fixed at issue time, and a job
// marked `after_earlier` (barrier) waits until every earlier job has finished. A group made
// with `waiter_runs_jobs` (one worker, jobs strictly one at a time: shm) also lets a thread
// that waits for a job no worker has taken yet run it, and the jobs before it, itself
// (Note [The waiter runs the job] in the .cpp).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "distributed/backends/process_group.h"

namespace gr::distributed {

class QueuedProcessGroup : public ProcessGroup {
 public:
  QueuedProcessGroup(int rank, int size, int workers = 1, bool waiter_runs_jobs = false);
  // Finishes the queued collectives, then stops the worker threads.
  ~QueuedProcessGroup() override;

  // True on a thread that runs a job because it waits for it (not on a worker).
  static bool on_waiting_thread();

 protected:
  // Runs `job` on a worker thread once every collective issued before it has started (with
  // `after_earlier`: has finished). The Work completes when the job returns (result =
  // `outputs`) or throws (the error); its name and flight recorder entry are `call`'s.
  WorkPtr enqueue(const CallInfo& call, std::vector<Tensor> outputs, std::function<void()> job,
                  bool after_earlier = false);
  // Stops the worker threads (call from the derived destructor, before its state dies).
  void shutdown();
  // Runs queued jobs on this thread, in order, until `target` has finished, or a job is
  // running elsewhere, or the queue is empty (waiter_runs_jobs groups; see the Note).
  void run_queued_until(const Work& target);
  // Extra words for a failed collective's error, from the backend's own message (Gloo names
  // the peer's address; the group knows which rank that is). Empty: nothing to add.
  virtual std::string explain_failure(const std::string& /*backend_message*/) const { return {}; }

 private:
  struct Job {
    WorkPtr work;
    std::function<void()> run;
    bool after_earlier = false;
  };
  class QueuedWork;
  void loop();
  void run_job(Job& job);
  std::exception_ptr failure(const std::string& description, const std::string& what) const;

  std::mutex mutex_;
  std::condition_variable cv_;       // a job was queued, or stopping
  std::condition_variable idle_cv_;  // a running job finished
  std::deque<Job> queue_;
  int running_ = 0;                  // jobs taken off the queue and not finished
  bool stopping_ = false;
  const bool waiter_runs_jobs_;
  std::vector<std::thread> workers_;
};

}  // namespace gr::distributed
