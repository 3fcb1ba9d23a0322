// gr::cuda: libtorch's torch::cuda queries and seeding (device_count, is_available,
// manual_seed_all). They work in every build: without the CUDA backend there are 0 devices.
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

}  // namespace gr::cuda
