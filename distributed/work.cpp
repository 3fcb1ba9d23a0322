// Work completion, waiting with timeouts, callbacks.
#include "distributed/work.h"

#include "core/error.h"

namespace gr::distributed {

bool Work::is_completed() const {
  std::lock_guard lock(mutex_);
  return completed_;
}

bool Work::is_success() const {
  std::lock_guard lock(mutex_);
  return completed_ && !error_;
}

std::exception_ptr Work::exception() const {
  std::lock_guard lock(mutex_);
  return error_;
}

void Work::wait(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  if (timeout.count() > 0) {
    bool done = done_cv_.wait_for(lock, timeout, [&] { return completed_; });
    GR_CHECK(done, description_, ": not completed after ", timeout.count(),
             " ms (a peer may have died or be stuck; every rank must issue the same collectives in the same order)");
  } else {
    done_cv_.wait(lock, [&] { return completed_; });
  }
  if (error_) std::rethrow_exception(error_);
}

void Work::then(std::function<void()> fn) {
  {
    std::lock_guard lock(mutex_);
    if (!completed_ && !finishing_) {
      callbacks_.push_back(std::move(fn));
      return;
    }
  }
  fn();
}

void Work::finish(std::exception_ptr error) {
  std::vector<std::function<void()>> callbacks;
  {
    std::lock_guard lock(mutex_);
    finishing_ = true;
    callbacks.swap(callbacks_);
  }
  // Callbacks run before waiters wake, so wait() returns after a chained step is done; a
  // failing callback becomes the work's error.
  for (auto& fn : callbacks) {
    try {
      fn();
    } catch (...) {
      if (!error) error = std::current_exception();
    }
  }
  {
    std::lock_guard lock(mutex_);
    completed_ = true;
    error_ = error;
  }
  done_cv_.notify_all();
}

}  // namespace gr::distributed
