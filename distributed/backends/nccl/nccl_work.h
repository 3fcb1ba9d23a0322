// NCCLWork: the Work of one NCCL collective, an event recorded on the group's communication
// stream after it; and Health, the failure every work and call of a group shares once the
// watchdog has aborted its communicator. See Note [NCCL work completion].
#pragma once

#include <atomic>
#include <chrono>
#include <exception>
#include <memory>
#include <mutex>
#include <string>

#include "cuda_kernels/event.h"
#include "distributed/backends/work.h"

namespace gr::distributed::nccl {

// Note [NCCL work completion]
// wait() does not block the host: it makes the caller's current stream wait for the
// collective's end event (see Note [Work and streams]). synchronize() also blocks the host
// until the event has completed. A work is finished (Work::finish, which runs then()
// callbacks) exactly once, by whichever comes first:
//  - the caller's wait(): the caller's stream already waits for the collective, so the
//    callbacks run on the calling thread with their kernels queued on that stream;
//  - the watchdog (or a synchronize() polling for it), once the end event has completed or
//    the group failed: callbacks run on that thread and its current stream (the collective
//    is complete, so any stream is ordered after it). A tensor such a callback creates
//    belongs to that stream: hand it to other streams as any cross-stream tensor
//    (record_stream, see Note [Cross-stream use]).
// Either way an event recorded after the callbacks is what every later wait() orders its
// stream against. is_completed() is true once the collective finished on the GPU or once a
// wait() ordered its caller's stream after it (the result is then ready for that stream).

class Health {
 public:
  // The first failure wins; returns whether this call set it.
  bool fail(const std::string& message);
  bool failed() const { return failed_.load(); }
  std::exception_ptr failure() const;
  // Rethrows the failure, prefixed by `what` (the operation that noticed it).
  void throw_if_failed(const std::string& what) const;

 private:
  std::atomic<bool> failed_{false};
  mutable std::mutex mutex_;
  std::string message_;
};

class Watchdog;

class NCCLWork : public Work {
 public:
  // `blocking`: wait() also blocks the host (barrier). The group records end_event() on its
  // stream right after the collective.
  NCCLWork(std::string description, int device, bool blocking, std::chrono::milliseconds timeout,
           std::shared_ptr<Health> health, std::weak_ptr<Watchdog> watchdog, FlightEntry flight = {});

  void wait(std::chrono::milliseconds timeout = std::chrono::milliseconds(0)) override;
  void synchronize() override;

  cuda::Event& end_event() { return end_; }
  int device() const { return device_; }
  std::chrono::steady_clock::time_point issued_at() const { return issued_at_; }
  std::chrono::milliseconds timeout() const { return timeout_; }

  // Watchdog side (see the Note): the collective has completed on the GPU; callbacks run on
  // the calling thread and its current stream.
  void finish_completed();
  // The group failed before this work finished.
  void finish_failed(std::exception_ptr error);
  // The flight recorder's view (Note [Flight recorder slots]): started when enqueued on the
  // stream, completed when the watchdog sees the end event, failed when the group fails.
  void record_enqueued() const { mark_started(); }
  void record_gpu_completed() const { flight().finished(false); }
  void record_failed(const std::string& why) const { flight().finished(true, why); }

 private:
  bool claim() { return !claimed_.exchange(true); }
  void stream_wait(std::chrono::milliseconds timeout);
  void finish_with_callbacks();
  // The caller's current stream of the work's device waits for `event`.
  void order_current_stream_after(const cuda::Event& event);
  void host_wait_for_gpu();

  int device_;
  bool blocking_;
  std::chrono::milliseconds timeout_;
  std::chrono::steady_clock::time_point issued_at_;
  std::shared_ptr<Health> health_;
  std::weak_ptr<Watchdog> watchdog_;
  std::atomic<bool> claimed_{false};
  cuda::Event end_;
  cuda::Event after_callbacks_;  // recorded by the finishing thread before the work completes
};

}  // namespace gr::distributed::nccl
