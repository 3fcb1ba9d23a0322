// The NCCL group's watchdog thread: completion by event query, timeouts, asynchronous
// errors, abort.
#include "distributed/backends/nccl/nccl_watchdog.h"

#include <cstdio>

#include "core/error.h"
#include "cuda_kernels/runtime.h"
#include "distributed/backends/nccl/nccl_utils.h"

namespace gr::distributed::nccl {

namespace {
// Poll interval while collectives are in flight (bounds the delay of is_completed() and of
// then() callbacks the watchdog runs), and while none are (asynchronous errors only).
constexpr std::chrono::milliseconds kBusyInterval{1};
constexpr std::chrono::milliseconds kIdleInterval{100};
}  // namespace

Watchdog::Watchdog(int rank, int size, std::shared_ptr<Health> health)
    : rank_(rank), size_(size), health_(std::move(health)) {}

Watchdog::~Watchdog() { stop(); }

void Watchdog::start(std::shared_ptr<Comm> comm, int device) {
  comm_ = std::move(comm);
  device_ = device;
  thread_ = std::thread([this] { loop(); });
}

void Watchdog::stop() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

size_t Watchdog::in_flight() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

void Watchdog::add(std::shared_ptr<NCCLWork> work, std::vector<Tensor> keep_alive) {
  {
    std::lock_guard lock(mutex_);
    entries_.push_back({std::move(work), std::move(keep_alive), false});
  }
  cv_.notify_all();
}

void Watchdog::poll() {
  std::lock_guard poll_lock(poll_mutex_);
  std::vector<Entry> done;
  std::string broken;
  {
    std::lock_guard lock(mutex_);
    // One stream, so collectives complete in issue order: stop at the first one running.
    try {
      while (!entries_.empty() && entries_.front().work->end_event().query()) {
        done.push_back(std::move(entries_.front()));
        entries_.pop_front();
      }
    } catch (const gr::Error& e) {
      broken = e.message();  // a CUDA error (a faulted kernel): the device is unusable
    }
  }
  for (Entry& e : done) {
    if (!e.failed) e.work->record_gpu_completed();
    if (!e.failed) e.work->finish_completed();
  }
  // `done` goes out of scope here: the tensors it kept alive are released after the GPU
  // finished with them.
  if (!broken.empty())
    fail(detail::str_cat("nccl on rank ", rank_, " of ", size_,
                         ": checking a collective's completion event failed: ", broken));
}

void Watchdog::check_timeout_and_async_error() {
  std::string message;
  {
    std::lock_guard lock(mutex_);
    if (!entries_.empty() && !entries_.front().failed) {
      const NCCLWork& w = *entries_.front().work;
      const auto waited =
          std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - w.issued_at());
      if (w.timeout().count() > 0 && waited > w.timeout())
        message = detail::str_cat(w.description(), " of ", size_, ": not completed after ", w.timeout().count(),
                                  " ms (waited ", waited.count(),
                                  " ms; a peer may have died or be stuck, or the ranks issued different collectives)");
    }
  }
  if (message.empty() && comm_ && !health_->failed()) {
    const ncclResult_t r = comm_->async_error();
    if (r != ncclSuccess && r != ncclInProgress)
      message = detail::str_cat(
          "nccl on rank ", rank_, " of ", size_, ": the communicator reported an asynchronous ",
          error_text(r, comm_->last_error().c_str(), "ncclCommGetAsyncError", "watchdog", device_, rank_));
  }
  if (!message.empty()) fail(message);
}

void Watchdog::fail(const std::string& message) {
  if (health_->fail(message + "; the NCCL communicator was aborted")) {
    std::fprintf(stderr, "gradring: %s; aborting the NCCL communicator\n", message.c_str());
    std::fflush(stderr);
    if (comm_) comm_->abort();  // in-flight kernels exit; their events complete
  }
  std::vector<std::shared_ptr<NCCLWork>> unfinished;
  {
    std::lock_guard lock(mutex_);
    for (Entry& e : entries_)
      if (!e.failed) {
        e.failed = true;
        unfinished.push_back(e.work);
      }
  }
  const std::exception_ptr error = health_->failure();
  for (const auto& w : unfinished) {
    w->record_failed(message);  // the first one writes the flight recorder dump
    w->finish_failed(error);
  }
}

bool Watchdog::drain(std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    poll();
    if (in_flight() == 0) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(kBusyInterval);
  }
}

void Watchdog::loop() {
  // Events and the callbacks' kernels belong to the group's device.
  try {
    cuda::set_device(device_);
  } catch (const gr::Error& e) {
    fail(detail::str_cat("nccl watchdog on rank ", rank_, ": ", e.message()));
  }
  std::unique_lock lock(mutex_);
  while (!stop_) {
    cv_.wait_for(lock, entries_.empty() ? kIdleInterval : kBusyInterval);
    if (stop_) break;
    lock.unlock();
    try {
      poll();
      check_timeout_and_async_error();
    } catch (const std::exception& e) {
      // Nothing may escape the thread; a failing check fails the group instead.
      fail(detail::str_cat("nccl watchdog on rank ", rank_, " of ", size_, ": ", e.what()));
    }
    lock.lock();
  }
}

}  // namespace gr::distributed::nccl
