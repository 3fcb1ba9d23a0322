// Work completion, waiting with timeouts, callbacks.
#include "distributed/backends/work.h"

#include <sched.h>

#include <atomic>
#include <cstdlib>

#include "core/env.h"
#include "core/error.h"

namespace gr::distributed {

// Note [Spinning before sleeping]
// A rank waiting for a collective is usually waiting for other threads of its own process
// (the backend's worker and socket threads) and for the peers. If the waiting thread sleeps,
// its CPU goes idle, and every hand-off of the collective then has to wake a thread on an
// idle (or, with lazy preemption, a busy) CPU: on virtual machines that can take until the
// next scheduler tick (4 ms at HZ=250), several times per collective. So wait() first polls
// for up to GRADRING_WAIT_SPIN_US microseconds (default 20000), giving the CPU away with
// sched_yield() between looks so that the threads doing the work run at once, and only then
// sleeps. MPI libraries and NCCL poll the same way. 0 turns polling off (oversubscribed
// machines: more ranks than cores). Measured in docs/benchmarks.md.
namespace {
constexpr int64_t kUnset = -1;

std::string error_text(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "an unknown exception";
  }
}
std::atomic<int64_t> g_spin_limit_us{kUnset};
}  // namespace

std::chrono::microseconds Work::parse_spin_limit(const char* value) {
  if (!value || !*value) return std::chrono::microseconds(20000);
  return std::chrono::microseconds(parse_whole_number("GRADRING_WAIT_SPIN_US", value, 0, 60'000'000, "microseconds"));
}

std::chrono::microseconds Work::spin_limit() {
  int64_t us = g_spin_limit_us.load(std::memory_order_relaxed);
  if (us == kUnset) {
    us = parse_spin_limit(std::getenv("GRADRING_WAIT_SPIN_US")).count();
    g_spin_limit_us.store(us, std::memory_order_relaxed);
  }
  return std::chrono::microseconds(us);
}

void Work::set_spin_limit(std::chrono::microseconds limit) {
  GR_CHECK(limit.count() >= 0, "Work::set_spin_limit: a negative limit (", limit.count(), " us)");
  g_spin_limit_us.store(limit.count(), std::memory_order_relaxed);
}

void Work::spin_until_completed(std::chrono::microseconds limit) const {
  const auto start = std::chrono::steady_clock::now();
  while (!is_completed() && std::chrono::steady_clock::now() - start < limit)
    sched_yield();
}

bool Work::is_completed() const { return completed_.load(std::memory_order_acquire); }

bool Work::is_success() const {
  std::lock_guard lock(mutex_);
  return completed_ && !error_;
}

std::exception_ptr Work::exception() const {
  std::lock_guard lock(mutex_);
  return error_;
}

void Work::wait(std::chrono::milliseconds timeout) {
  const auto start = std::chrono::steady_clock::now();
  const auto spin = timeout.count() > 0 ? std::min<std::chrono::microseconds>(spin_limit(), timeout) : spin_limit();
  spin_until_completed(spin);
  std::unique_lock lock(mutex_);
  if (timeout.count() > 0) {
    bool done = done_cv_.wait_until(lock, start + timeout, [&] { return completed_.load(); });
    if (!done && flight_) {
      lock.unlock();
      dump_flight_recorder_after_failure(description_ + ": wait timed out after " + std::to_string(timeout.count()) +
                                         " ms");
      lock.lock();
      done = completed_.load();
    }
    GR_CHECK(done, description_, ": not completed after ", timeout.count(),
             " ms (a peer may have died or be stuck; every rank must issue the same collectives in the same order)");
  } else {
    done_cv_.wait(lock, [&] { return completed_.load(); });
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
  if (flight_ && finish_records_flight_) flight_.finished(error != nullptr, error ? error_text(error) : "");
  {
    std::lock_guard lock(mutex_);
    error_ = error;
    completed_.store(true, std::memory_order_release);
  }
  done_cv_.notify_all();
}

}  // namespace gr::distributed
