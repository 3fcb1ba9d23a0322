// main() of the CUDA suite, in three modes (ctest runs each as its own test):
//   (default)     the "cuda" parity suite; without a device it prints one line and exits 77,
//                 which ctest reports as skipped (SKIP_RETURN_CODE);
//   --no-device   hides every device (CUDA_VISIBLE_DEVICES="") and runs "cuda_no_device",
//                 so the no-device behaviour is tested on machines with a GPU as well, and
//                 "cuda_host", the kernels' host-side arithmetic (the default mode runs it too);
//   --first-use   runs "cuda_first_use" without asking gradring anything first (the device
//                 check goes to the CUDA runtime directly); skipped (77) without a device.
#define DOCTEST_CONFIG_IMPLEMENT
#include <cuda_runtime_api.h>
#include <doctest/doctest.h>
#include <gradring/core/version.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  std::string mode;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--no-device") == 0 || std::strcmp(argv[i], "--first-use") == 0) mode = argv[i];
    else args.push_back(argv[i]);
  }
  doctest::Context context(static_cast<int>(args.size()), args.data());
  if (mode == "--no-device") {
    setenv("CUDA_VISIBLE_DEVICES", "", 1);  // read by the driver at its first call, in the tests
    context.addFilter("test-suite", "cuda_no_device,cuda_host");
    return context.run();
  }
  if (mode == "--first-use") {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
      std::printf("test_cuda --first-use: SKIPPED: no CUDA device found\n");
      return 77;
    }
    context.addFilter("test-suite", "cuda_first_use");
    return context.run();
  }
  context.addFilter("test-suite-exclude", "cuda_no_device,cuda_first_use");
  if (gr::cuda_device_count() == 0) {
    std::printf("test_cuda: SKIPPED: no CUDA device found (the CPU-vs-CUDA parity tests need one)\n");
    return 77;
  }
  return context.run();
}
