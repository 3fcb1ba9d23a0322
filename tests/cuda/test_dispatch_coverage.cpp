// Every dispatch stub with a CPU kernel has a CUDA kernel registered in this build: the
// kernels' own registrations (core/dispatch.h's record), so no list here can fall behind.
// Runs without a device (it only reads the record), in the suite that runs everywhere.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include <gradring/core/dispatch.h>
#include <gradring/core/native/copy/copy.h>

using namespace gr;

TEST_SUITE("cuda_no_device") {
  TEST_CASE("every dispatch stub has a CPU and a CUDA kernel") {
    const std::vector<std::string> cpu = registered_stubs(kCPU), cuda = registered_stubs(kCUDA);
    CHECK(cpu.size() > 50);  // the record is filled (the whole archives are linked)
    for (const std::string& stub : cpu) {
      INFO(stub);
      CHECK(std::find(cuda.begin(), cuda.end(), stub) != cuda.end());
    }
    CHECK(native::cross_device_copy_stub.has(kCUDA));  // copies between the CPU and a GPU: the CUDA side only
  }
}
