// NCCLWork: stream-ordered wait, host synchronize, and the once-only finish shared by the
// caller and the watchdog (Note [NCCL work completion]); the group's Health.
#include "distributed/backends/nccl/nccl_work.h"

#include <thread>

#include "core/error.h"
#include "cuda_kernels/stream.h"
#include "distributed/backends/nccl/nccl_watchdog.h"

namespace gr::distributed::nccl {

namespace {
// A synchronize() whose event never completes gives up this long after the group's timeout
// (by then the watchdog should have aborted the communicator; this only guards against a
// watchdog that cannot run).
constexpr std::chrono::milliseconds kSynchronizeSlack{30000};
}  // namespace

bool Health::fail(const std::string& message) {
  std::lock_guard lock(mutex_);
  if (failed_.load()) return false;
  message_ = message;
  failed_.store(true);
  return true;
}

std::exception_ptr Health::failure() const {
  std::lock_guard lock(mutex_);
  if (!failed_.load()) return nullptr;
  try {
    GR_ERROR(message_);
  } catch (...) {
    return std::current_exception();
  }
}

void Health::throw_if_failed(const std::string& what) const {
  if (!failed_.load()) return;
  std::lock_guard lock(mutex_);
  GR_ERROR(what, ": the process group failed earlier and cannot be used any more: ", message_);
}

NCCLWork::NCCLWork(std::string description, int device, bool blocking, std::chrono::milliseconds timeout,
                   std::shared_ptr<Health> health, std::weak_ptr<Watchdog> watchdog, FlightEntry flight)
    : Work(std::move(description), std::move(flight)),
      device_(device),
      blocking_(blocking),
      timeout_(timeout),
      issued_at_(std::chrono::steady_clock::now()),
      health_(std::move(health)),
      watchdog_(std::move(watchdog)) {
  finish_records_flight_ = false;  // a wait() finishes it before the GPU has: the watchdog records
}

void NCCLWork::order_current_stream_after(const cuda::Event& event) { cuda::Stream::current(device_).wait(event); }

void NCCLWork::wait(std::chrono::milliseconds timeout) {
  if (blocking_)
    synchronize();
  else
    stream_wait(timeout);
}

void NCCLWork::stream_wait(std::chrono::milliseconds timeout) {
  if (claim()) {
    // Not finished by the watchdog yet: order this thread's stream after the collective,
    // then finish here, so callbacks queue their kernels behind that wait.
    if (std::exception_ptr failure = health_->failure()) {
      finish(failure);
    } else {
      cuda::DeviceGuard guard(device_);
      order_current_stream_after(end_);
      finish_with_callbacks();
    }
    Work::wait();  // completed now: rethrows the failure or a callback's error
    return;
  }
  // The watchdog claimed it: its finish() is quick (callbacks only queue work), so this host
  // wait is short; it rethrows a failure. While it is still aborting the communicator, the
  // group's failure is the answer already.
  if (health_->failed() && !is_completed()) std::rethrow_exception(health_->failure());
  Work::wait(timeout);
  order_current_stream_after(after_callbacks_.recorded() ? after_callbacks_ : end_);
}

void NCCLWork::host_wait_for_gpu() {
  const auto limit = issued_at_ + timeout_ + kSynchronizeSlack;
  for (int spins = 0;; ++spins) {
    if (health_->failed()) return;  // the communicator was aborted; wait() raises the error
    if (end_.query()) return;
    GR_CHECK(timeout_.count() <= 0 || std::chrono::steady_clock::now() < limit, description(), ": not completed after ",
             (timeout_ + kSynchronizeSlack).count(),
             " ms and the watchdog did not abort it (a peer may have died or be stuck)");
    if (spins > 64) std::this_thread::sleep_for(std::chrono::microseconds(spins > 4096 ? 1000 : 20));
  }
}

void NCCLWork::synchronize() {
  host_wait_for_gpu();
  // Finish every work of the group that has completed (those issued earlier included), so
  // is_completed() holds for them when this returns.
  if (std::shared_ptr<Watchdog> w = watchdog_.lock()) w->poll();
  stream_wait(timeout_);
}

void NCCLWork::finish_with_callbacks() {
  // The last callback records an event after the others' kernels: later wait() calls (from
  // any thread) order their streams after it.
  then([this] { after_callbacks_.record(cuda::Stream::current(device_)); });
  finish();
}

void NCCLWork::finish_completed() {
  if (!claim()) return;
  // The collective has completed, so callbacks may run on this thread's own stream.
  cuda::DeviceGuard guard(device_);
  finish_with_callbacks();
}

void NCCLWork::finish_failed(std::exception_ptr error) {
  if (!claim()) return;
  cuda::DeviceGuard guard(device_);
  finish(error);
}

}  // namespace gr::distributed::nccl
