// Stream pools (never destroyed), the calling thread's current stream per device, StreamGuard.
#include "cuda_kernels/stream.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "core/error.h"
#include "core/version.h"
#include "cuda_kernels/cuda_check.h"
#include "cuda_kernels/event.h"

namespace gr::cuda {

namespace {

constexpr uint32_t kPoolSize = 32;

struct Pool {
  std::array<cudaStream_t, kPoolSize> streams{};  // created on first hand-out
  std::atomic<uint32_t> next{0};
};

struct DevicePools {
  int least = 0, greatest = 0;
  std::vector<std::unique_ptr<Pool>> by_priority;  // index: priority - greatest
  Pool thread_defaults;
};

std::mutex g_mutex;

int resolve(int device, const char* op) {
  const int count = cuda_device_count();
  const int d = device < 0 && count > 0 ? current_device() : device;
  GR_CHECK(d >= 0 && d < count, op, ": no CUDA device ", d, " (", count, " visible)");
  return d;
}

// Leaked on purpose: pool streams outlive every thread and static object that may use them.
DevicePools& pools_locked(int device) {
  static auto* all = new std::vector<std::unique_ptr<DevicePools>>(static_cast<size_t>(cuda_device_count()));
  auto& p = (*all)[static_cast<size_t>(device)];
  if (!p) {
    auto made = std::make_unique<DevicePools>();
    DeviceGuard guard(device);
    GR_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&made->least, &made->greatest));
    made->by_priority.resize(static_cast<size_t>(made->least - made->greatest + 1));
    for (auto& pool : made->by_priority) pool = std::make_unique<Pool>();
    p = std::move(made);
  }
  return *p;
}

// Blocking streams (cudaStreamDefault), as cudaStreamPerThread is: work on the legacy
// default stream still waits for them, so a stray synchronous cudaMemcpy stays ordered.
cudaStream_t take(Pool& pool, int device, int priority) {
  const uint32_t i = pool.next.fetch_add(1, std::memory_order_relaxed) % kPoolSize;
  std::lock_guard lock(g_mutex);
  if (!pool.streams[i]) {
    DeviceGuard guard(device);
    cudaStream_t s = nullptr;
    GR_CUDA_CHECK(cudaStreamCreateWithPriority(&s, cudaStreamDefault, priority));
    pool.streams[i] = s;
  }
  return pool.streams[i];
}

// Per device: the stream chosen by set_current()/StreamGuard, and the thread's default.
struct ThreadStreams {
  std::vector<cudaStream_t> current, defaults;
};
thread_local ThreadStreams t_streams;

cudaStream_t& slot(std::vector<cudaStream_t>& v, int device) {
  if (v.size() <= static_cast<size_t>(device)) v.resize(static_cast<size_t>(device) + 1, nullptr);
  return v[static_cast<size_t>(device)];
}

}  // namespace

std::pair<int, int> Stream::priority_range(int device) {
  const int d = resolve(device, "Stream::priority_range");
  std::lock_guard lock(g_mutex);
  const DevicePools& p = pools_locked(d);
  return {p.least, p.greatest};
}

Stream Stream::create(int device, int priority) {
  const int d = resolve(device, "Stream::create");
  Pool* pool = nullptr;
  {
    std::lock_guard lock(g_mutex);
    DevicePools& p = pools_locked(d);
    priority = std::clamp(priority, p.greatest, p.least);
    pool = p.by_priority[static_cast<size_t>(priority - p.greatest)].get();
  }
  return Stream(take(*pool, d, priority), d);
}

Stream Stream::thread_default(int device) {
  const int d = resolve(device, "Stream::thread_default");
  cudaStream_t& s = slot(t_streams.defaults, d);
  if (!s) {
    Pool* pool = nullptr;
    int priority = 0;
    {
      std::lock_guard lock(g_mutex);
      DevicePools& p = pools_locked(d);
      pool = &p.thread_defaults;
      priority = std::clamp(0, p.greatest, p.least);
    }
    s = take(*pool, d, priority);
  }
  return Stream(s, d);
}

Stream Stream::current(int device) {
  const int d = resolve(device, "Stream::current");
  cudaStream_t s = slot(t_streams.current, d);
  return s ? Stream(s, d) : thread_default(d);
}

void Stream::set_current(const Stream& stream) {
  resolve(stream.device(), "Stream::set_current");
  GR_CHECK(stream.handle() != nullptr && stream.handle() != cudaStreamLegacy && stream.handle() != cudaStreamPerThread,
           "Stream::set_current: the legacy and per-thread default streams cannot be current streams; use "
           "Stream::create()");
  slot(t_streams.current, stream.device()) = stream.handle();
}

int Stream::priority() const {
  int p = 0;
  GR_CUDA_CHECK(cudaStreamGetPriority(handle_, &p));
  return p;
}

bool Stream::query() const {
  const cudaError_t err = cudaStreamQuery(handle_);
  if (err == cudaErrorNotReady) {
    (void)cudaGetLastError();  // not an error: clear it so the next check does not see it
    return false;
  }
  GR_CUDA_CHECK(err);
  return true;
}

void Stream::synchronize() const {
  note_host_sync();
  GR_CUDA_CHECK(cudaStreamSynchronize(handle_));
}

void Stream::wait(const Event& event) const {
  if (!event.recorded()) return;  // nothing was queued before it: nothing to wait for
  GR_CUDA_CHECK(cudaStreamWaitEvent(handle_, event.handle(), 0));
}

StreamGuard::StreamGuard(const Stream& stream) : device_(stream.device()), previous_(Stream::current(stream.device())) {
  Stream::set_current(stream);
}

// The slot exists (the constructor made it), so this neither allocates nor throws.
StreamGuard::~StreamGuard() { slot(t_streams.current, previous_.device()) = previous_.handle(); }

}  // namespace gr::cuda
