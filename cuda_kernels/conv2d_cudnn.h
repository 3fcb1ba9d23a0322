// The cuDNN path of CUDA conv2d (see conv2d.h): forward, backward data, backward filter and
// the bias gradient, with each problem's algorithms chosen once and cached
// (conv2d_algo_cache.h). Built only with cuDNN (GRADRING_WITH_CUDNN).
#pragma once

#include <cstddef>

#include "core/native/conv/conv2d.h"

namespace gr::cuda {

// y = conv2d(x, w) + b (b may be null). False, with nothing written, when cuDNN supports no
// algorithm for this problem: the caller runs the im2col path.
bool conv2d_forward_cudnn(const native::Conv2dArgs& a, ScalarType t, const void* x, const void* w, const void* b,
                          void* y);

// Computes each requested gradient (non-null gx, gw, gb) that cuDNN supports and sets its
// pointer to null; the caller computes what is left on the im2col path.
void conv2d_backward_cudnn(const native::Conv2dArgs& a, ScalarType t, const void* gy, const void* x, const void* w,
                           void*& gx, void*& gw, void*& gb);

size_t cudnn_algo_cache_size();
void cudnn_clear_algo_cache();

}  // namespace gr::cuda
