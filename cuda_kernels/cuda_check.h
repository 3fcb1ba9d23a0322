// Checks for CUDA runtime and cuBLAS calls: a failed call throws gr::Error carrying the
// library's own error name and string, the statement, the function, file:line and device.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

namespace gr::cuda::detail {
[[noreturn]] void throw_cuda_error(cudaError_t err, const char* stmt, const char* func, const char* file, int line);
[[noreturn]] void throw_cublas_error(cublasStatus_t status, const char* stmt, const char* func, const char* file,
                                     int line);
}  // namespace gr::cuda::detail

#define GR_CUDA_CHECK(stmt)                                                                     \
  do {                                                                                          \
    cudaError_t gr_cuda_err_ = (stmt);                                                          \
    if (gr_cuda_err_ != cudaSuccess) [[unlikely]]                                               \
      ::gr::cuda::detail::throw_cuda_error(gr_cuda_err_, #stmt, __func__, __FILE__, __LINE__); \
  } while (0)

#define GR_CUBLAS_CHECK(stmt)                                                                        \
  do {                                                                                               \
    cublasStatus_t gr_cublas_status_ = (stmt);                                                       \
    if (gr_cublas_status_ != CUBLAS_STATUS_SUCCESS) [[unlikely]]                                     \
      ::gr::cuda::detail::throw_cublas_error(gr_cublas_status_, #stmt, __func__, __FILE__, __LINE__); \
  } while (0)

// After every <<<...>>>: a bad launch configuration is reported here, at the launch site.
#define GR_CUDA_CHECK_LAUNCH() GR_CUDA_CHECK(cudaGetLastError())
