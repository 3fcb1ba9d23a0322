// Comm: one NCCL communicator in non-blocking mode (config.blocking = 0), so that no NCCL
// call can hang the host: a call answering ncclInProgress is polled (ncclCommGetAsyncError)
// up to a deadline, and abort() (from any thread, e.g. the watchdog) makes in-flight
// kernels exit and every later call fail. Created from rank 0's unique id, shared through
// the group's Store.
#pragma once

#include <nccl.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>

#include "distributed/store/store.h"

namespace gr::distributed::nccl {

class Comm {
 public:
  // Rank 0 creates the unique id and sets it at `key`; the others get it (waiting up to the
  // store's timeout). Then the non-blocking init, polled up to `timeout`. Call with `device`
  // current.
  Comm(Store& store, const std::string& key, int rank, int size, int device, std::chrono::milliseconds timeout);
  // Finalizes and destroys a healthy communicator (bounded wait, then abort); never throws.
  ~Comm();
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  ncclComm_t get() const { return comm_; }
  int device() const { return device_; }
  int rank() const { return rank_; }
  void set_timeout(std::chrono::milliseconds t) { timeout_ms_ = t.count(); }

  // The result of an NCCL call on this communicator (or of ncclGroupEnd): ncclInProgress is
  // polled until the communicator is ready again; an error (or the deadline, or an abort)
  // throws gr::Error with NCCL's strings, `stmt`, file:line, device and rank.
  void complete(ncclResult_t result, const char* stmt, const char* func, const char* file, int line);
  // ncclCommGetAsyncError: ncclSuccess, ncclInProgress, or the error that broke the
  // communicator. Thread-safe.
  ncclResult_t async_error() const;
  std::string last_error() const;

  // ncclCommAbort, once; later calls do nothing. Thread-safe.
  void abort();
  bool aborted() const { return aborted_.load(); }
  // At process exit with the CUDA runtime already unloading: forget the communicator
  // without calling NCCL (the process is going away).
  void leak() { leaked_ = true; }

 private:
  void wait_ready(const char* stmt, const char* func, const char* file, int line);

  ncclComm_t comm_ = nullptr;
  int rank_;
  int size_;
  int device_;
  std::atomic<int64_t> timeout_ms_;
  std::atomic<bool> aborted_{false};
  mutable std::mutex abort_mutex_;
  bool leaked_ = false;
};

}  // namespace gr::distributed::nccl

// Runs an NCCL call on `comm` (a nccl::Comm) and completes it (see Comm::complete).
#define GR_NCCL_CALL(comm, stmt) (comm).complete((stmt), #stmt, __func__, __FILE__, __LINE__)
