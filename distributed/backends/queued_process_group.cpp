// The worker thread and queue of CPU process groups.
#include "distributed/backends/queued_process_group.h"

#include "core/error.h"

namespace gr::distributed {

// Note [The waiter runs the job]
// Handing a job to the worker costs a thread wake-up, and on the virtual machines we
// measured a woken thread can wait for the next scheduler tick (4 ms) before it runs. When
// a thread waits for a job that no worker has taken yet (DDP's last bucket, launched just
// before backward ends and waited for at once), it can as well run the job itself: it
// takes jobs off the front of the queue, in order, while nothing else runs, until its own
// has finished. Only for groups whose jobs run strictly one at a time (one worker, and the
// worker too waits until no job runs before it starts one), so the order every rank
// agrees on holds whichever thread runs a job; a wait with a timeout shorter than the
// group's leaves the job to the worker (a job is bounded by the group's timeout only).

namespace {
thread_local bool t_on_waiting_thread = false;
}

class QueuedProcessGroup::QueuedWork : public Work {
 public:
  QueuedWork(const CallInfo& call, QueuedProcessGroup& group) : Work(call.description, call.flight), group_(group) {}
  void wait(std::chrono::milliseconds timeout) override {
    // The group outlives every job that has not finished (its destructor runs them all).
    if (!is_completed() && (timeout.count() == 0 || timeout >= group_.timeout())) group_.run_queued_until(*this);
    Work::wait(timeout);
  }

 private:
  QueuedProcessGroup& group_;
};

bool QueuedProcessGroup::on_waiting_thread() { return t_on_waiting_thread; }

QueuedProcessGroup::QueuedProcessGroup(int rank, int size, int workers, bool waiter_runs_jobs)
    : ProcessGroup(rank, size), waiter_runs_jobs_(waiter_runs_jobs) {
  GR_CHECK(workers >= 1, "process group: need at least one worker thread, got ", workers);
  GR_CHECK(!waiter_runs_jobs || workers == 1, "process group: a waiter can run jobs only with one worker, got ", workers);
  for (int i = 0; i < workers; ++i) workers_.emplace_back([this] { loop(); });
}

QueuedProcessGroup::~QueuedProcessGroup() { shutdown(); }

void QueuedProcessGroup::shutdown() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ && workers_.empty()) return;
    stopping_ = true;
  }
  cv_.notify_all();
  for (std::thread& w : workers_)
    if (w.joinable()) w.join();
  workers_.clear();
  std::unique_lock lock(mutex_);
  idle_cv_.wait(lock, [&] { return running_ == 0; });  // and no waiter still runs one
}

WorkPtr QueuedProcessGroup::enqueue(const CallInfo& call, std::vector<Tensor> outputs, std::function<void()> job,
                                    bool after_earlier) {
  WorkPtr work = waiter_runs_jobs_ ? std::make_shared<QueuedWork>(call, *this)
                                   : std::make_shared<Work>(call.description, call.flight);
  work->set_result(std::move(outputs));
  {
    std::lock_guard lock(mutex_);
    GR_CHECK(!stopping_, work->description(), ": the process group is shutting down");
    queue_.push_back({work, std::move(job), after_earlier});
  }
  cv_.notify_one();
  return work;
}

std::exception_ptr QueuedProcessGroup::failure(const std::string& description, const std::string& what) const {
  const std::string extra = explain_failure(what);
  return std::make_exception_ptr(
      gr::Error(detail::str_cat(description, " failed: ", what, extra.empty() ? "" : " ", extra), __FILE__, __LINE__));
}

void QueuedProcessGroup::loop() {
  for (;;) {
    Job job;
    {
      std::unique_lock lock(mutex_);
      // Where a waiter may run jobs, a job is taken only while none runs: one at a time.
      cv_.wait(lock, [&] {
        return (stopping_ && queue_.empty()) || (!queue_.empty() && (running_ == 0 || !waiter_runs_jobs_));
      });
      if (queue_.empty()) return;  // stopping, and everything issued has run
      job = std::move(queue_.front());
      queue_.pop_front();
      // Taken in issue order; a barrier-like job then waits for the ones taken before it.
      if (job.after_earlier) idle_cv_.wait(lock, [&] { return running_ == 0; });
      ++running_;
    }
    run_job(job);
  }
}

void QueuedProcessGroup::run_queued_until(const Work& target) {
  if (!waiter_runs_jobs_) return;
  std::unique_lock lock(mutex_);
  while (!target.is_completed() && running_ == 0 && !queue_.empty()) {
    Job job = std::move(queue_.front());
    queue_.pop_front();
    ++running_;
    lock.unlock();
    t_on_waiting_thread = true;
    run_job(job);
    t_on_waiting_thread = false;
    lock.lock();
  }
}

// Runs a job taken off the queue (running_ counts it) and finishes its Work.
void QueuedProcessGroup::run_job(Job& job) {
  std::exception_ptr error;
  job.work->mark_started();
  try {
    job.run();
  } catch (const gr::Error&) {
    error = std::current_exception();
  } catch (const std::exception& e) {
    // A backend's own exception (gloo::IoException, ...) becomes a gr::Error that says which
    // collective failed on which rank, and which peer when the backend's message tells.
    error = failure(job.work->description(), e.what());
  } catch (...) {
    error = std::current_exception();
  }
  job.work->finish(error);
  {
    std::lock_guard lock(mutex_);
    --running_;
  }
  idle_cv_.notify_all();
  if (waiter_runs_jobs_) cv_.notify_one();  // the worker may take the next job now
}

}  // namespace gr::distributed
