// cuDNN error reporting, the per-(thread, device) handle, and the RAII descriptors.
#include "cuda_kernels/cudnn_common.h"

#include <string>
#include <unordered_map>

#include "core/error.h"
#include "cuda_kernels/runtime.h"

namespace gr::cuda {

namespace detail {
void throw_cudnn_error(cudnnStatus_t status, const char* stmt, const char* func, const char* file, int line) {
  std::string details;
#if CUDNN_MAJOR >= 9
  char buffer[512] = {};
  cudnnGetLastErrorString(buffer, sizeof(buffer));  // cuDNN's own account of the last failure
  if (buffer[0] != '\0') details = gr::detail::str_cat(" [", buffer, "]");
#endif
  int device = -1;
  const std::string where =
      cudaGetDevice(&device) == cudaSuccess ? "device cuda:" + std::to_string(device) : "device ?";
  gr::detail::throw_error(
      file, line,
      gr::detail::str_cat("cuDNN error ", static_cast<int>(status), " ", cudnnGetErrorString(status), details, " in `",
                          stmt, "` (", func, ", ", where, ")"));
}
}  // namespace detail

bool cudnn_not_supported(cudnnStatus_t status) {
#ifdef CUDNN_STATUS_CATEGORY
  return CUDNN_STATUS_CATEGORY(status) == CUDNN_STATUS_NOT_SUPPORTED;
#else
  return status == CUDNN_STATUS_NOT_SUPPORTED;
#endif
}

cudnnHandle_t cudnn_handle() {
  thread_local std::unordered_map<int, cudnnHandle_t> handles;
  const int device = current_device();
  auto it = handles.find(device);
  if (it == handles.end()) {
    cudnnHandle_t h = nullptr;
    GR_CUDNN_CHECK(cudnnCreate(&h));  // on the current device
    it = handles.emplace(device, h).first;
  }
  GR_CUDNN_CHECK(cudnnSetStream(it->second, current_stream()));
  return it->second;
}

cudnnDataType_t cudnn_data_type(ScalarType t, const char* op) {
  switch (t) {
    case kFloat32:
      return CUDNN_DATA_FLOAT;
    case kFloat64:
      return CUDNN_DATA_DOUBLE;
    default:
      GR_ERROR(op, ": cuDNN path supports float32 and float64, got ", t);
  }
}

TensorDescriptor::TensorDescriptor(ScalarType t, int n, int c, int h, int w) {
  GR_CUDNN_CHECK(cudnnCreateTensorDescriptor(&desc_));
  GR_CUDNN_CHECK(cudnnSetTensor4dDescriptor(desc_, CUDNN_TENSOR_NCHW, cudnn_data_type(t, "cuDNN tensor"), n, c, h, w));
}

FilterDescriptor::FilterDescriptor(ScalarType t, int k, int c, int h, int w) {
  GR_CUDNN_CHECK(cudnnCreateFilterDescriptor(&desc_));
  GR_CUDNN_CHECK(cudnnSetFilter4dDescriptor(desc_, cudnn_data_type(t, "cuDNN filter"), CUDNN_TENSOR_NCHW, k, c, h, w));
}

ConvolutionDescriptor::ConvolutionDescriptor(ScalarType t, int pad_h, int pad_w, int stride_h, int stride_w, int dil_h,
                                             int dil_w, int groups, bool tf32)
    : math_(t != kFloat32 ? CUDNN_DEFAULT_MATH : tf32 ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH) {
  GR_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&desc_));
  GR_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(desc_, pad_h, pad_w, stride_h, stride_w, dil_h, dil_w,
                                                 CUDNN_CROSS_CORRELATION, cudnn_data_type(t, "cuDNN convolution")));
  GR_CUDNN_CHECK(cudnnSetConvolutionGroupCount(desc_, groups));
  GR_CUDNN_CHECK(cudnnSetConvolutionMathType(desc_, math_));
}

}  // namespace gr::cuda
