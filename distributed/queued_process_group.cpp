// The worker thread and queue of CPU process groups.
#include "distributed/queued_process_group.h"

#include <sstream>

namespace gr::distributed {

QueuedProcessGroup::QueuedProcessGroup(int rank, int size) : ProcessGroup(rank, size), worker_([this] { loop(); }) {}

QueuedProcessGroup::~QueuedProcessGroup() { shutdown(); }

void QueuedProcessGroup::shutdown() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ && !worker_.joinable()) return;
    stopping_ = true;
  }
  cv_.notify_all();
  if (worker_.joinable()) worker_.join();
}

WorkPtr QueuedProcessGroup::enqueue(std::string description, std::vector<Tensor> outputs, std::function<void()> job) {
  auto work = std::make_shared<Work>(std::move(description));
  work->set_result(std::move(outputs));
  {
    std::lock_guard lock(mutex_);
    GR_CHECK(!stopping_, work->description(), ": the process group is shutting down");
    queue_.push_back({work, std::move(job)});
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

void QueuedProcessGroup::loop() {
  for (;;) {
    Job job;
    {
      std::unique_lock lock(mutex_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and everything issued has run
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    std::exception_ptr error;
    try {
      job.run();
    } catch (...) {
      error = std::current_exception();
    }
    job.work->finish(error);
  }
}

}  // namespace gr::distributed
