// The throwing half of GR_CUDA_CHECK / GR_CUBLAS_CHECK (cold paths, kept out of line).
#include "cuda_kernels/cuda_check.h"

#include <string>

#include "core/error.h"

namespace gr::cuda::detail {
namespace {
std::string device_text() {
  int device = -1;
  // A sticky error can make this fail too; the message then says so instead of throwing.
  if (cudaGetDevice(&device) != cudaSuccess) return "device ?";
  return "device cuda:" + std::to_string(device);
}
}  // namespace

void throw_cuda_error(cudaError_t err, const char* stmt, const char* func, const char* file, int line) {
  cudaGetLastError();  // clear a non-sticky error so the next call does not report it again
  gr::detail::throw_error(file, line,
                          gr::detail::str_cat("CUDA error ", cudaGetErrorName(err), ": ", cudaGetErrorString(err),
                                              " in `", stmt, "` (", func, ", ", device_text(), ")"));
}

void throw_cublas_error(cublasStatus_t status, const char* stmt, const char* func, const char* file, int line) {
  gr::detail::throw_error(file, line,
                          gr::detail::str_cat("cuBLAS error ", cublasGetStatusName(status), ": ",
                                              cublasGetStatusString(status), " in `", stmt, "` (", func, ", ",
                                              device_text(), ")"));
}

}  // namespace gr::cuda::detail
