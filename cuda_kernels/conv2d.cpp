// The kCUDA conv2d kernels: empty problems first, then cuDNN (built and enabled), then the
// im2col path for whatever cuDNN left; and the switches of conv2d.h.
#include "cuda_kernels/conv2d.h"

#include <atomic>
#include <cstdlib>

#include "core/env.h"
#include "core/native/conv/conv2d.h"
#include "cuda_kernels/conv2d_im2col.h"
#include "cuda_kernels/cuda_check.h"
#include "cuda_kernels/runtime.h"
#ifdef GRADRING_WITH_CUDNN
#include "cuda_kernels/conv2d_cudnn.h"
#endif

namespace gr::cuda {
namespace {

size_t env_workspace_limit() {
  const char* v = std::getenv("GRADRING_CONV_WORKSPACE_MB");
  return v == nullptr || *v == '\0' ? size_t(1) << 30 : static_cast<size_t>(std::strtoull(v, nullptr, 10)) << 20;
}

std::atomic<bool> g_cudnn_enabled{env_flag("GRADRING_CUDNN", true)};
std::atomic<bool> g_cudnn_benchmark{env_flag("GRADRING_CUDNN_BENCHMARK", false)};
std::atomic<bool> g_cudnn_tf32{env_flag("GRADRING_CUDNN_TF32", false)};
std::atomic<size_t> g_workspace_limit{env_workspace_limit()};
thread_local Conv2dPath t_last_path = Conv2dPath::kNone;

bool use_cudnn() { return cudnn_built() && g_cudnn_enabled.load(); }

void zero_fill(void* p, int64_t n, ScalarType t) {
  if (p != nullptr && n > 0)
    GR_CUDA_CHECK(cudaMemsetAsync(p, 0, static_cast<size_t>(n) * element_size(t), current_stream()));
}

void conv2d_forward_cuda(const native::Conv2dArgs& a, ScalarType t, const void* x, const void* w, const void* b,
                         void* y) {
  t_last_path = Conv2dPath::kNone;
  if (a.N == 0 || a.C_out == 0 || a.H_out * a.W_out == 0) return;
#ifdef GRADRING_WITH_CUDNN
  if (use_cudnn() && conv2d_forward_cudnn(a, t, x, w, b, y)) {
    t_last_path = Conv2dPath::kCudnn;
    return;
  }
#endif
  conv2d_forward_im2col(a, t, x, w, b, y);
  t_last_path = Conv2dPath::kIm2col;
}

void conv2d_backward_cuda(const native::Conv2dArgs& a, ScalarType t, const void* gy, const void* x, const void* w,
                          void* gx, void* gw, void* gb) {
  t_last_path = Conv2dPath::kNone;
  if (a.N == 0 || a.C_out == 0 || a.H_out * a.W_out == 0) {  // nothing flows back: zero gradients
    zero_fill(gx, a.N * a.C_in * a.H * a.W, t);
    zero_fill(gw, a.C_out * (a.C_in / a.groups) * a.kH * a.kW, t);
    zero_fill(gb, a.C_out, t);
    return;
  }
  if (gx == nullptr && gw == nullptr && gb == nullptr) return;
  bool cudnn_ran = false;
#ifdef GRADRING_WITH_CUDNN
  if (use_cudnn()) {
    const void* before[3] = {gx, gw, gb};
    conv2d_backward_cudnn(a, t, gy, x, w, gx, gw, gb);
    cudnn_ran = before[0] != gx || before[1] != gw || before[2] != gb;
  }
#endif
  const bool rest = gx != nullptr || gw != nullptr || gb != nullptr;
  if (rest) conv2d_backward_im2col(a, t, gy, x, w, gx, gw, gb);
  t_last_path = !cudnn_ran ? Conv2dPath::kIm2col : rest ? Conv2dPath::kMixed : Conv2dPath::kCudnn;
}

}  // namespace

GR_REGISTER_KERNEL(native::conv2d_forward_stub, kCUDA, &conv2d_forward_cuda);
GR_REGISTER_KERNEL(native::conv2d_backward_stub, kCUDA, &conv2d_backward_cuda);

bool cudnn_built() {
#ifdef GRADRING_WITH_CUDNN
  return true;
#else
  return false;
#endif
}

void set_cudnn_enabled(bool enabled) { g_cudnn_enabled.store(enabled); }
bool cudnn_enabled() { return g_cudnn_enabled.load(); }
void set_cudnn_benchmark(bool enabled) { g_cudnn_benchmark.store(enabled); }
bool cudnn_benchmark() { return g_cudnn_benchmark.load(); }
void set_cudnn_allow_tf32(bool enabled) { g_cudnn_tf32.store(enabled); }
bool cudnn_allow_tf32() { return g_cudnn_tf32.load(); }
void set_conv2d_workspace_limit(size_t bytes) { g_workspace_limit.store(bytes); }
size_t conv2d_workspace_limit() { return g_workspace_limit.load(); }
Conv2dPath last_conv2d_path() { return t_last_path; }

size_t conv2d_algo_cache_size() {
#ifdef GRADRING_WITH_CUDNN
  return cudnn_algo_cache_size();
#else
  return 0;
#endif
}
void clear_conv2d_algo_cache() {
#ifdef GRADRING_WITH_CUDNN
  cudnn_clear_algo_cache();
#endif
}

}  // namespace gr::cuda
