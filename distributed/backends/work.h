// Work: the handle of an asynchronous collective. wait() blocks until it is done (and
// rethrows its error, or throws after a timeout); is_completed() polls. For CPU backends
// "done" means the result is in the output tensors; see Note [Work and streams] for CUDA.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "distributed/backends/flight_recorder.h"

namespace gr::distributed {

// Note [Work and streams]
// On CPU backends wait() returns when the collective has finished and its outputs hold the
// result. On NCCL, wait() makes the caller's current CUDA stream wait for the collective
// (an event), without blocking the host; synchronize() blocks the host as well.

class Work {
 public:
  // `flight`: the call's flight recorder entry, marked completed or failed by finish().
  explicit Work(std::string description, FlightEntry flight = {})
      : description_(std::move(description)), flight_(std::move(flight)) {}
  virtual ~Work() = default;
  Work(const Work&) = delete;
  Work& operator=(const Work&) = delete;

  bool is_completed() const;
  // True once completed without error.
  bool is_success() const;
  // Blocks until done; rethrows the collective's error. A zero timeout means no limit;
  // otherwise a gr::Error names the collective and how long was waited. Polls for a while
  // before it sleeps (Note [Spinning before sleeping] in work.cpp, GRADRING_WAIT_SPIN_US).
  virtual void wait(std::chrono::milliseconds timeout = std::chrono::milliseconds(0));
  virtual void synchronize() { wait(); }
  std::exception_ptr exception() const;
  // The tensors holding the result (e.g. the reduced bucket), for communication hooks.
  const std::vector<Tensor>& result() const { return result_; }
  const std::string& description() const { return description_; }
  // Runs `fn` when the collective finishes, before wait() returns to anyone (immediately if
  // it already finished), on the finishing thread. Chains a hook's post-processing.
  void then(std::function<void()> fn);

  // Backends: set the result, then mark the work finished (successfully or with an error).
  void set_result(std::vector<Tensor> result) { result_ = std::move(result); }
  void finish(std::exception_ptr error = nullptr);
  // Backends: the call has started to run (its flight recorder entry says so).
  void mark_started() const { flight_.started(); }

  // How long wait() polls before it sleeps: GRADRING_WAIT_SPIN_US (microseconds, default
  // 20000; read at the first wait) until set here. 0: sleep at once.
  static std::chrono::microseconds spin_limit();
  static void set_spin_limit(std::chrono::microseconds limit);
  // The value of GRADRING_WAIT_SPIN_US (null or empty: the default); throws on a bad value.
  static std::chrono::microseconds parse_spin_limit(const char* value);

 protected:
  // A backend that records completion elsewhere (NCCL: at the end event, which a wait()
  // does not wait for) turns finish()'s recording off.
  const FlightEntry& flight() const { return flight_; }
  bool finish_records_flight_ = true;

 private:
  // Polls (yielding the CPU) until finished or `limit` has passed.
  void spin_until_completed(std::chrono::microseconds limit) const;

  std::string description_;
  FlightEntry flight_;
  mutable std::mutex mutex_;
  std::condition_variable done_cv_;
  // Written under mutex_ (with error_); atomic so that wait() can poll it without the mutex.
  std::atomic<bool> completed_{false};
  bool finishing_ = false;
  std::exception_ptr error_;
  std::vector<Tensor> result_;
  std::vector<std::function<void()>> callbacks_;
};

}  // namespace gr::distributed
