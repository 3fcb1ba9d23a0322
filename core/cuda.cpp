// gr::cuda queries on top of the backend registry (core/backends.cpp).
#include "core/cuda.h"

#include "core/generator.h"
#include "core/version.h"

namespace gr::cuda {

size_t device_count() { return static_cast<size_t>(cuda_device_count()); }
bool is_available() { return cuda_is_available(); }
void manual_seed(uint64_t seed) { gr::manual_seed(seed); }
void manual_seed_all(uint64_t seed) { gr::manual_seed(seed); }

}  // namespace gr::cuda
