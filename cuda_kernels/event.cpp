// Event and the allocators' pool of reusable timing-free events.
#include "cuda_kernels/event.h"

#include <cstdio>
#include <mutex>
#include <utility>
#include <vector>

#include "core/error.h"
#include "cuda_kernels/cuda_check.h"

namespace gr::cuda {

namespace {
// Destructors must not throw; at exit the runtime may already be gone (cudaErrorCudartUnloading).
void destroy_quietly(cudaEvent_t event) noexcept {
  const cudaError_t err = cudaEventDestroy(event);
  if (err != cudaSuccess && err != cudaErrorCudartUnloading)
    std::fprintf(stderr, "gradring: cudaEventDestroy failed: %s\n", cudaGetErrorString(err));
}
}  // namespace

Event::~Event() {
  if (event_) destroy_quietly(event_);
}

Event::Event(Event&& o) noexcept
    : event_(std::exchange(o.event_, nullptr)), device_(o.device_), timing_(o.timing_), recorded_(std::exchange(o.recorded_, false)) {}

Event& Event::operator=(Event&& o) noexcept {
  if (this != &o) {
    if (event_) destroy_quietly(event_);
    event_ = std::exchange(o.event_, nullptr);
    device_ = o.device_;
    timing_ = o.timing_;
    recorded_ = std::exchange(o.recorded_, false);
  }
  return *this;
}

void Event::record(const Stream& stream) {
  DeviceGuard guard(stream.device());
  if (!event_) {
    GR_CUDA_CHECK(cudaEventCreateWithFlags(&event_, timing_ ? cudaEventDefault : cudaEventDisableTiming));
    device_ = stream.device();
  }
  GR_CHECK(device_ == stream.device(), "Event::record: the event belongs to cuda:", device_,
           " but the stream to cuda:", stream.device());
  GR_CUDA_CHECK(cudaEventRecord(event_, stream.handle()));
  recorded_ = true;
}

bool Event::query() const { return !recorded_ || detail::event_completed(event_); }

void Event::synchronize() const {
  if (!recorded_) return;
  note_host_sync();
  GR_CUDA_CHECK(cudaEventSynchronize(event_));
}

float Event::elapsed_ms(const Event& end) const {
  GR_CHECK(timing_ && end.timing_, "Event::elapsed_ms: both events need enable_timing = true");
  GR_CHECK(recorded_ && end.recorded_, "Event::elapsed_ms: both events must be recorded first");
  float ms = 0;
  GR_CUDA_CHECK(cudaEventElapsedTime(&ms, event_, end.event_));
  return ms;
}

namespace detail {
namespace {
std::mutex g_pool_mutex;
std::vector<std::vector<cudaEvent_t>>& free_events() {
  static auto* lists = new std::vector<std::vector<cudaEvent_t>>();  // leaked: used from deleters at exit
  return *lists;
}

cudaEvent_t take_pooled_event(int device) {
  {
    std::lock_guard lock(g_pool_mutex);
    auto& lists = free_events();
    if (static_cast<size_t>(device) < lists.size() && !lists[static_cast<size_t>(device)].empty()) {
      cudaEvent_t e = lists[static_cast<size_t>(device)].back();
      lists[static_cast<size_t>(device)].pop_back();
      return e;
    }
  }
  DeviceGuard guard(device);
  cudaEvent_t e = nullptr;
  GR_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  return e;
}

void give_pooled_event(int device, cudaEvent_t event) noexcept {
  try {
    std::lock_guard lock(g_pool_mutex);
    auto& lists = free_events();
    if (lists.size() <= static_cast<size_t>(device)) lists.resize(static_cast<size_t>(device) + 1);
    lists[static_cast<size_t>(device)].push_back(event);
  } catch (...) {
    destroy_quietly(event);  // out of host memory: drop it instead
  }
}

struct PooledEvent {
  cudaEvent_t event;
  int device;
};
}  // namespace

bool event_completed(cudaEvent_t event) {
  const cudaError_t err = cudaEventQuery(event);
  if (err == cudaErrorNotReady) {
    (void)cudaGetLastError();
    return false;
  }
  GR_CUDA_CHECK(err);
  return true;
}

void* StreamEventBackend::record_event(uintptr_t stream) {
  const auto s = reinterpret_cast<cudaStream_t>(stream);
  int device = 0;
  GR_CUDA_CHECK(cudaStreamGetDevice(s, &device));
  DeviceGuard guard(device);
  cudaEvent_t e = take_pooled_event(device);
  const cudaError_t err = cudaEventRecord(e, s);
  if (err != cudaSuccess) give_pooled_event(device, e);
  GR_CUDA_CHECK(err);
  return new PooledEvent{e, device};
}

bool StreamEventBackend::event_done(void* e) { return event_completed(static_cast<PooledEvent*>(e)->event); }

void StreamEventBackend::event_synchronize(void* e) {
  note_host_sync();
  GR_CUDA_CHECK(cudaEventSynchronize(static_cast<PooledEvent*>(e)->event));
}

void StreamEventBackend::release_event(void* e) noexcept {
  auto* pe = static_cast<PooledEvent*>(e);
  give_pooled_event(pe->device, pe->event);
  delete pe;
}
}  // namespace detail

}  // namespace gr::cuda
