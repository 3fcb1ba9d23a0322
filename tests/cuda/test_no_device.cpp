// Without a device (main.cpp hides them for this suite): a CUDA build runs on the CPU after
// one notice, creating a CUDA tensor fails with a clear gr::Error, and the CUDA/cuBLAS check
// macros report the library's error, the statement and the call site.
#include <unistd.h>

#include <cstdio>
#include <string>

#include "cuda_kernels/cuda_check.h"
#include "parity.h"

using namespace gr;

namespace {
// Runs f with stderr captured into the returned string.
template <class F>
std::string capture_stderr(F&& f) {
  std::fflush(stderr);
  FILE* tmp = std::tmpfile();
  REQUIRE(tmp != nullptr);
  const int saved = dup(2);
  dup2(fileno(tmp), 2);
  f();
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  std::string text;
  std::rewind(tmp);
  for (int c; (c = std::fgetc(tmp)) != EOF;) text.push_back(static_cast<char>(c));
  std::fclose(tmp);
  return text;
}
}  // namespace

TEST_SUITE("cuda_no_device") {
  // Must be the first test of this suite to query the device count: it checks the notice.
  TEST_CASE("no device: one notice, CPU keeps working, CUDA tensors fail clearly") {
    CHECK(built_with_cuda());
    bool available = true;
    std::string first = capture_stderr([&] { available = cuda_is_available(); });
    CHECK_FALSE(available);
    CHECK(first.find("gradring: no CUDA device found; running on CPU\n") != std::string::npos);
    std::string second = capture_stderr([&] { CHECK(cuda_device_count() == 0); });
    CHECK(second.empty());  // the notice is printed once per process

    CHECK_THROWS_WITH_AS(empty({2, 3}, TensorOptions(kFloat32).device(Device("cuda"))),
                         doctest::Contains("no CUDA device was found"), gr::Error);
    CHECK_THROWS_WITH_AS(ones({3}).to(Device("cuda:0")), doctest::Contains("no CUDA device was found"), gr::Error);
    CHECK_THROWS_WITH_AS(ones({3}).cuda(), doctest::Contains("no CUDA device was found"), gr::Error);
    CHECK_THROWS_WITH_AS(ones({3}).cuda(1), doctest::Contains("no CUDA device was found"), gr::Error);
    CHECK_THROWS_WITH_AS(cuda::set_device(0), doctest::Contains("0 CUDA device(s) visible"), gr::Error);
    CHECK(cuda::memory_stats().allocated_bytes == 0);
    CHECK_NOTHROW(cuda::synchronize());
    CHECK_NOTHROW(cuda::empty_cache());

    Tensor x = tensor({1.0, 2.0, 3.0});
    CHECK((x * 2.0).sum().item<double>() == 12.0);
  }

  TEST_CASE("GR_CUDA_CHECK throws gr::Error with the CUDA error, the statement and the site") {
    try {
      GR_CUDA_CHECK(cudaErrorInvalidValue);
      FAIL("GR_CUDA_CHECK did not throw");
    } catch (const gr::Error& e) {
      const std::string what = e.what();
      CHECK(what.find("cudaErrorInvalidValue") != std::string::npos);
      CHECK(what.find(cudaGetErrorString(cudaErrorInvalidValue)) != std::string::npos);
      CHECK(what.find("`cudaErrorInvalidValue`") != std::string::npos);
      CHECK(what.find("test_no_device.cpp:") != std::string::npos);
      CHECK(what.find("device") != std::string::npos);
    }
    CHECK_NOTHROW(GR_CUDA_CHECK(cudaSuccess));
  }

  TEST_CASE("GR_CUBLAS_CHECK throws gr::Error with the cuBLAS status") {
    CHECK_THROWS_WITH_AS(GR_CUBLAS_CHECK(CUBLAS_STATUS_NOT_INITIALIZED),
                         doctest::Contains("CUBLAS_STATUS_NOT_INITIALIZED"), gr::Error);
    CHECK_NOTHROW(GR_CUBLAS_CHECK(CUBLAS_STATUS_SUCCESS));
  }
}
