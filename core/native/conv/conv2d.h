// 2-D convolution without autograd, NCHW: forward, and the gradients for input, weight and
// bias. Shapes: input [N, C_in, H, W], weight [C_out, C_in / groups, kH, kW], bias [C_out],
// output [N, C_out, H_out, W_out]. The device kernels are dispatch stubs over contiguous
// buffers; the CPU ones are one dense product for tiny maps (conv2d_dense.cpp), Winograd
// F(2x2, 3x3) for 3x3 stride-1 kernels (conv2d_winograd.cpp), direct loops for few input
// channels (conv2d_direct.cpp) and im2col + GEMM otherwise (conv2d.cpp); a CUDA backend
// registers its own.
#pragma once

#include <array>
#include <tuple>

#include "core/cpu_backend.h"
#include "core/dispatch.h"
#include "core/tensor.h"

namespace gr::native {

// Everything a kernel needs to know about one convolution (validated by conv2d_args).
struct Conv2dArgs {
  int64_t N = 0, C_in = 0, H = 0, W = 0;
  int64_t C_out = 0, kH = 0, kW = 0;
  int64_t H_out = 0, W_out = 0;
  int64_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dil_h = 1, dil_w = 1;
  int64_t groups = 1;
};

// Checks input/weight/bias (dims, channels vs groups, kernel vs padded input, dtypes,
// devices) and the stride/padding/dilation lists (1 or 2 values each), throwing gr::Error
// that names conv2d and the shapes. `bias` may be undefined. (conv_args.cpp)
Conv2dArgs conv2d_args(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                       IntArrayRef padding, IntArrayRef dilation, int64_t groups);
// conv1d is conv2d over a unit height: input [N, C_in, L] and weight [C_out, C_in / groups, k]
// (unsqueezed at dim 2 by the caller), lists of one value; messages name conv1d.
Conv2dArgs conv1d_args(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                       IntArrayRef padding, IntArrayRef dilation, int64_t groups);

// Note [Transposed convolution]
// conv_transpose2d(x, w) with x [N, C_in, H, W] and w [C_in, C_out / groups, kH, kW] is the
// input gradient of the convolution `a` that maps [N, C_out, H_t, W_t] to x with weight w,
// H_t = (H - 1) * stride - 2 * padding + dilation * (kH - 1) + output_padding + 1:
//   forward      conv2d_backward(a, x, -, w) (grad_input)      = col2im(W^T x)
//   grad input   conv2d(a, grad, w)                            (the convolution itself)
//   grad weight  conv2d_backward(a, grad, x, -) (grad_weight)
// so transposed convolutions reuse every conv2d kernel, CPU and CUDA (cuDNN's backward-data
// pass is its transposed convolution). An output_padding at or past the stride (allowed
// below the dilation) makes `a` produce output_padding / stride extra rows (columns): a.H_out
// (a.W_out) exceeds x's, and the caller pads x with zeros to match.
// The args of that convolution, with conv_transpose2d's checks and messages.
Conv2dArgs conv_transpose2d_args(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                                 IntArrayRef padding, IntArrayRef output_padding, int64_t groups,
                                 IntArrayRef dilation);
// The same over a unit height: input [N, C_in, L], weight [C_in, C_out / groups, k].
Conv2dArgs conv_transpose1d_args(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                                 IntArrayRef padding, IntArrayRef output_padding, int64_t groups,
                                 IntArrayRef dilation);

// Kernels over contiguous buffers of dtype t. bias / grad_* may be null (= not wanted).
using Conv2dForwardFn = void (*)(const Conv2dArgs& a, ScalarType t, const void* input, const void* weight,
                                 const void* bias, void* output);
using Conv2dBackwardFn = void (*)(const Conv2dArgs& a, ScalarType t, const void* grad_output, const void* input,
                                  const void* weight, void* grad_input, void* grad_weight, void* grad_bias);
GR_DECLARE_DISPATCH(Conv2dForwardFn, conv2d_forward_stub);
GR_DECLARE_DISPATCH(Conv2dBackwardFn, conv2d_backward_stub);

// out = conv2d(input, weight, bias); `a` from conv2d_args on the same tensors.
Tensor conv2d(const Conv2dArgs& a, const Tensor& input, const Tensor& weight, const Tensor& bias);
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride, IntArrayRef padding,
              IntArrayRef dilation, int64_t groups);

// (grad_input, grad_weight, grad_bias) for the outputs selected by `need`; the others are
// undefined. `input` is only read for grad_weight and `weight` only for grad_input, so
// either may be undefined when its partner gradient is not wanted.
std::tuple<Tensor, Tensor, Tensor> conv2d_backward(const Conv2dArgs& a, const Tensor& grad_output,
                                                   const Tensor& input, const Tensor& weight,
                                                   std::array<bool, 3> need);

// The CPU algorithm and workspace choices are public: core/cpu_backend.h.
using Conv2dCpuAlgorithm = backends::cpu::Conv2dAlgorithm;

}  // namespace gr::native
