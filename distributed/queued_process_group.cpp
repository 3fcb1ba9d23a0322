// The worker thread and queue of CPU process groups.
#include "distributed/queued_process_group.h"

#include <sstream>

#include "core/error.h"

namespace gr::distributed {

QueuedProcessGroup::QueuedProcessGroup(int rank, int size, int workers) : ProcessGroup(rank, size) {
  GR_CHECK(workers >= 1, "process group: need at least one worker thread, got ", workers);
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
}

WorkPtr QueuedProcessGroup::enqueue(std::string description, std::vector<Tensor> outputs, std::function<void()> job,
                                    bool after_earlier) {
  auto work = std::make_shared<Work>(std::move(description));
  work->set_result(std::move(outputs));
  {
    std::lock_guard lock(mutex_);
    GR_CHECK(!stopping_, work->description(), ": the process group is shutting down");
    queue_.push_back({work, std::move(job), after_earlier});
  }
  cv_.notify_one();
  return work;
}

std::string QueuedProcessGroup::describe(const char* op, const Tensor& t, const char* detail) {
  std::ostringstream out;
  out << backend_name() << " " << op;
  if (detail) out << " (" << detail << ")";
  if (t.defined()) out << " " << t.scalar_type() << " " << t.sizes();
  {
    std::lock_guard lock(mutex_);
    out << " #" << sequence_++;
  }
  out << " on rank " << rank_;
  return out.str();
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
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and everything issued has run
      job = std::move(queue_.front());
      queue_.pop_front();
      // Taken in issue order; a barrier-like job then waits for the ones taken before it.
      if (job.after_earlier) idle_cv_.wait(lock, [&] { return running_ == 0; });
      ++running_;
    }
    std::exception_ptr error;
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
  }
}

}  // namespace gr::distributed
