// The non-blocking NCCL communicator: unique id through the store, init and every call
// polled to a deadline, abort, and a bounded finalize at destruction.
#include "distributed/backends/nccl/nccl_comm.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <thread>

#include "core/error.h"
#include "distributed/backends/nccl/nccl_utils.h"

namespace gr::distributed::nccl {

namespace {

using Clock = std::chrono::steady_clock;

// How long a destructor waits for ncclCommFinalize before aborting instead.
constexpr std::chrono::milliseconds kFinalizeLimit{10000};

// Polls `state` until it is not ncclInProgress, backing off from a spin to 1 ms sleeps;
// false when `deadline` passed first.
template <class State>
bool poll_until_ready(State&& state, Clock::time_point deadline, ncclResult_t& result) {
  for (int spins = 0;; ++spins) {
    result = state();
    if (result != ncclInProgress) return true;
    if (Clock::now() > deadline) return false;
    if (spins > 64) std::this_thread::sleep_for(std::chrono::microseconds(spins > 1024 ? 1000 : 50));
  }
}

}  // namespace

Comm::Comm(Store& store, const std::string& key, int rank, int size, int device, std::chrono::milliseconds timeout)
    : rank_(rank), size_(size), device_(device), timeout_ms_(timeout.count()) {
  ncclUniqueId id;
  if (rank == 0) {
    ncclResult_t r = ncclGetUniqueId(&id);
    if (r != ncclSuccess)
      throw_error(r, ncclGetLastError(nullptr), "ncclGetUniqueId(&id)", __func__, __FILE__, __LINE__, device, rank);
    store.set(key, Bytes(reinterpret_cast<const uint8_t*>(&id), reinterpret_cast<const uint8_t*>(&id) + sizeof id));
  } else {
    Bytes b;
    try {
      b = store.get(key);  // waits up to the store's timeout for rank 0
    } catch (const gr::Error& e) {
      GR_ERROR("nccl: rank ", rank, " of ", size, " did not get rank 0's NCCL unique id: ", e.message());
    }
    GR_CHECK(b.size() == sizeof id, "nccl: rank ", rank, ": the unique id in the store has ", b.size(),
             " bytes, expected ", sizeof id, " (another job using the same store keys?)");
    std::memcpy(&id, b.data(), sizeof id);
  }
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;  // every call returns at once; see complete()
  ncclResult_t r = ncclCommInitRankConfig(&comm_, size, id, rank, &config);
  if (r != ncclSuccess && r != ncclInProgress) {
    std::string last = ncclGetLastError(comm_);
    if (comm_) ncclCommAbort(comm_);
    comm_ = nullptr;
    throw_error(r, last.c_str(), "ncclCommInitRankConfig(&comm, size, id, rank, &config)", __func__, __FILE__, __LINE__,
                device, rank);
  }
  try {
    wait_ready("ncclCommInitRankConfig (every rank of the group must reach its first collective)", __func__, __FILE__,
               __LINE__);
  } catch (...) {
    abort();
    throw;
  }
}

Comm::~Comm() {
  if (!comm_ || aborted_.load() || leaked_) return;
  // Finalize flushes what was issued and waits for the peers; bounded, since a peer may be
  // gone. Past the limit (or on an error) abort instead.
  if (async_error() != ncclSuccess) {  // broken (or still busy): nothing to flush
    abort();
    return;
  }
  ncclResult_t r = ncclCommFinalize(comm_);
  if (r == ncclInProgress) {
    const auto deadline = Clock::now() + std::min(kFinalizeLimit, std::chrono::milliseconds(timeout_ms_.load()));
    if (!poll_until_ready([&] { return async_error(); }, deadline, r)) r = ncclInProgress;
  }
  if (r == ncclSuccess)
    r = ncclCommDestroy(comm_);
  else
    abort();
  if (r != ncclSuccess && !aborted_.load())
    std::fprintf(stderr, "gradring: nccl rank %d: destroying the communicator failed: %s\n", rank_,
                 ncclGetErrorString(r));
}

void Comm::complete(ncclResult_t result, const char* stmt, const char* func, const char* file, int line) {
  if (result == ncclInProgress)
    wait_ready(stmt, func, file, line);
  else if (result != ncclSuccess)
    throw_error(result, last_error().c_str(), stmt, func, file, line, device_, rank_);
}

void Comm::wait_ready(const char* stmt, const char* func, const char* file, int line) {
  const auto timeout = std::chrono::milliseconds(timeout_ms_.load());
  ncclResult_t r = ncclSuccess;
  const bool ready =
      poll_until_ready([&] { return aborted_.load() ? ncclInvalidUsage : async_error(); }, Clock::now() + timeout, r);
  GR_CHECK(!aborted_.load(), "nccl: `", stmt, "` (", func, ", rank ", rank_, " of ", size_,
           "): the communicator was aborted (see the watchdog's error)");
  if (!ready)
    gr::detail::throw_error(
        file, line,
        detail::str_cat("nccl: `", stmt, "` (", func, ", rank ", rank_, " of ", size_, ") did not complete within ",
                        timeout.count(), " ms (a peer may have died, or the ranks issued different collectives)"));
  if (r != ncclSuccess) throw_error(r, last_error().c_str(), stmt, func, file, line, device_, rank_);
}

ncclResult_t Comm::async_error() const {
  // The lock keeps abort() from freeing the communicator under this call.
  std::lock_guard lock(abort_mutex_);
  if (aborted_.load()) return ncclInvalidUsage;
  ncclResult_t state = ncclSuccess;
  ncclResult_t r = ncclCommGetAsyncError(comm_, &state);
  return r != ncclSuccess ? r : state;
}

std::string Comm::last_error() const {
  std::lock_guard lock(abort_mutex_);
  if (aborted_.load()) return "the communicator was aborted";
  const char* text = ncclGetLastError(comm_);
  return text ? text : "";
}

void Comm::abort() {
  std::lock_guard lock(abort_mutex_);
  if (aborted_.load() || !comm_) return;
  aborted_.store(true);
  ncclResult_t r = ncclCommAbort(comm_);
  if (r != ncclSuccess && r != ncclInProgress)
    std::fprintf(stderr, "gradring: nccl rank %d: ncclCommAbort failed: %s\n", rank_, ncclGetErrorString(r));
}

}  // namespace gr::distributed::nccl
