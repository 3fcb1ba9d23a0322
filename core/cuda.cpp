// gr::cuda queries on top of the backend registry (core/backends.cpp).
#include "core/cuda.h"

#include <atomic>

#include "core/env.h"
#include "core/generator.h"
#include "core/version.h"

namespace gr::cuda {

size_t device_count() { return static_cast<size_t>(cuda_device_count()); }
bool is_available() { return cuda_is_available(); }
void manual_seed(uint64_t seed) { gr::manual_seed(seed); }
void manual_seed_all(uint64_t seed) { gr::manual_seed(seed); }

namespace {
std::atomic<bool> g_cudnn_sdp{env_flag("GRADRING_CUDNN_ATTENTION", true)};
std::atomic<uint64_t> g_cudnn_sdp_calls{0};
}  // namespace

void enable_cudnn_sdp(bool enabled) { g_cudnn_sdp.store(enabled); }
bool cudnn_sdp_enabled() { return g_cudnn_sdp.load(); }
uint64_t cudnn_sdp_calls() { return g_cudnn_sdp_calls.load(); }
void detail::count_cudnn_sdp_call() { g_cudnn_sdp_calls.fetch_add(1, std::memory_order_relaxed); }

}  // namespace gr::cuda
