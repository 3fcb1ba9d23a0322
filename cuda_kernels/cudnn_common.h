// What every cuDNN caller of the backend needs: GR_CUDNN_CHECK (throws gr::Error with cuDNN's
// status name and message, the statement, function, file:line and device) and
// GR_CUDNN_SUPPORTED (the same, but NOT_SUPPORTED is an answer, not an error), one handle per
// (thread, device) bound to current_stream(), and RAII descriptors for NCHW tensors, filters
// and convolutions. Only compiled in builds with cuDNN (GRADRING_WITH_CUDNN).
#pragma once

#include <cudnn.h>

#include <cstdint>

#include "core/dtype.h"

namespace gr::cuda {

namespace detail {
[[noreturn]] void throw_cudnn_error(cudnnStatus_t status, const char* stmt, const char* func, const char* file,
                                    int line);
}  // namespace detail

#define GR_CUDNN_CHECK(stmt)                                                                        \
  do {                                                                                              \
    cudnnStatus_t gr_cudnn_status_ = (stmt);                                                        \
    if (gr_cudnn_status_ != CUDNN_STATUS_SUCCESS) [[unlikely]]                                      \
      ::gr::cuda::detail::throw_cudnn_error(gr_cudnn_status_, #stmt, __func__, __FILE__, __LINE__); \
  } while (0)

// CUDNN_STATUS_NOT_SUPPORTED or one of its cuDNN 9 refinements (NOT_SUPPORTED_SHAPE, ...).
bool cudnn_not_supported(cudnnStatus_t status);

namespace detail {
inline bool cudnn_supported(cudnnStatus_t status, const char* stmt, const char* func, const char* file, int line) {
  if (status == CUDNN_STATUS_SUCCESS) return true;
  if (cudnn_not_supported(status)) return false;
  throw_cudnn_error(status, stmt, func, file, line);
}
}  // namespace detail

// For calls whose NOT_SUPPORTED answer has a fallback: true on success, false on
// NOT_SUPPORTED (any refinement), and any other status throws as GR_CUDNN_CHECK does.
#define GR_CUDNN_SUPPORTED(stmt) ::gr::cuda::detail::cudnn_supported((stmt), #stmt, __func__, __FILE__, __LINE__)

// The calling thread's handle for the current device, set to current_stream(). Handles are
// created on first use and never destroyed (cudnnDestroy at exit can run after the driver).
cudnnHandle_t cudnn_handle();

// float32 -> CUDNN_DATA_FLOAT, float64 -> CUDNN_DATA_DOUBLE; anything else throws naming `op`.
cudnnDataType_t cudnn_data_type(ScalarType t, const char* op);

// Owns one cuDNN descriptor: created by the derived constructor, destroyed here (also when
// that constructor throws after creating it).
template <class Desc, cudnnStatus_t (*Destroy)(Desc)>
class CudnnDescriptor {
 public:
  CudnnDescriptor(const CudnnDescriptor&) = delete;
  CudnnDescriptor& operator=(const CudnnDescriptor&) = delete;
  ~CudnnDescriptor() {
    if (desc_ != nullptr) Destroy(desc_);
  }
  Desc get() const { return desc_; }

 protected:
  CudnnDescriptor() = default;
  Desc desc_ = nullptr;
};

// A contiguous NCHW tensor [n, c, h, w].
class TensorDescriptor : public CudnnDescriptor<cudnnTensorDescriptor_t, cudnnDestroyTensorDescriptor> {
 public:
  TensorDescriptor(ScalarType t, int n, int c, int h, int w);
};

// A contiguous KCRS filter [out_channels, in_channels / groups, kh, kw].
class FilterDescriptor : public CudnnDescriptor<cudnnFilterDescriptor_t, cudnnDestroyFilterDescriptor> {
 public:
  FilterDescriptor(ScalarType t, int k, int c, int h, int w);
};

// A 2-D cross-correlation (what deep-learning frameworks call convolution) with groups,
// computed in dtype t. float32 is restricted to FMA math (no TF32), as the cuBLAS GEMMs are,
// unless `tf32` (set_cudnn_allow_tf32, PyTorch's torch.backends.cudnn.allow_tf32).
class ConvolutionDescriptor : public CudnnDescriptor<cudnnConvolutionDescriptor_t, cudnnDestroyConvolutionDescriptor> {
 public:
  ConvolutionDescriptor(ScalarType t, int pad_h, int pad_w, int stride_h, int stride_w, int dil_h, int dil_w,
                        int groups, bool tf32 = false);
  cudnnMathType_t math_type() const { return math_; }

 private:
  cudnnMathType_t math_ = CUDNN_DEFAULT_MATH;
};

}  // namespace gr::cuda
