// The one registration point for optional device backends: the CUDA backend registers its
// kernels and allocator here when the build has it and a device exists at run time.
#include <cstdio>
#include <mutex>

#include "core/version.h"

#ifdef GRADRING_WITH_CUDA
namespace gr::cuda {
// Defined in cuda_kernels/: returns the number of devices and registers the backend if > 0.
int initialize_backend();
}  // namespace gr::cuda
#endif

namespace gr {

bool built_with_cuda() {
#ifdef GRADRING_WITH_CUDA
  return true;
#else
  return false;
#endif
}

int cuda_device_count() {
#ifdef GRADRING_WITH_CUDA
  static int count = [] {
    int n = gr::cuda::initialize_backend();
    if (n == 0) std::fprintf(stderr, "gradring: no CUDA device found; running on CPU\n");
    return n;
  }();
  return count;
#else
  return 0;
#endif
}

bool cuda_is_available() { return cuda_device_count() > 0; }

}  // namespace gr
