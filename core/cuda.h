// gr::cuda: libtorch's torch::cuda queries and seeding (device_count, is_available,
// manual_seed_all), and the switch of attention's cuDNN path. They work in every build:
// without the CUDA backend there are 0 devices.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gr::cuda {

// Usable CUDA devices (0 without the backend or a device).
size_t device_count();
bool is_available();
// gradring's CUDA kernels draw from the default generator (counter-based Philox, the same
// streams on every device), so seeding "all CUDA generators" seeds that one generator.
void manual_seed(uint64_t seed);
void manual_seed_all(uint64_t seed);

// Whether scaled_dot_product_attention may run bfloat16/float16 on cuDNN's fused attention
// (PyTorch's torch.backends.cuda.enable_cudnn_sdp / cudnn_sdp_enabled): in builds with it,
// for the calls it takes exactly (no dropout, no attn_mask; docs/cuda.md, "cuDNN attention");
// everything else, and whatever cuDNN refuses, runs on gradring's kernels. Default on;
// GRADRING_CUDNN_ATTENTION=0 in the environment turns it off at startup.
void enable_cudnn_sdp(bool enabled);
bool cudnn_sdp_enabled();
// Attention passes (forward or backward) that ran on cuDNN in this process, so benchmarks and
// tests can tell which path they timed. 0 in builds without cuDNN attention.
uint64_t cudnn_sdp_calls();

namespace detail {
void count_cudnn_sdp_call();  // the CUDA backend, after each pass it ran on cuDNN
}  // namespace detail

}  // namespace gr::cuda
