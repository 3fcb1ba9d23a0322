// The CPU kernels' choices a program can set or read, as torch.backends.* are PyTorch's: the
// convolution algorithm and workspace, and whether bfloat16 products run on AVX512_BF16 pairs.
// Benchmarks and tests pin them; a training program normally leaves them alone.
#pragma once

#include <cstdint>

namespace gr::backends::cpu {

// Which CPU algorithm conv2d uses. kAuto: the dense product (core/native/conv/conv2d_dense.h) where
// a map has at most half as many positions as the kernel has taps (so at most half im2col's
// products: 3x3 kernels on 2x2 and 1x1 maps) and its matrix fits the workspace limit; Winograd
// F(2x2, 3x3) for 3x3 kernels with stride 1 and dilation 1, at least 8 channels in and out per
// group and output maps of at least 4x4 (in builds with the packed GEMM kernels); the direct
// kernels (core/native/conv/conv2d_direct.h) for horizontal stride 1 and few taps per output (see
// use_direct in conv2d.cpp) in float32 builds with AVX-512; else im2col + GEMM. kWinograd /
// kDirect / kDense force that algorithm wherever it applies (im2col elsewhere; kDense applies
// everywhere); kIm2col uses im2col everywhere (tests, benchmarks).
enum class Conv2dAlgorithm { kAuto, kIm2col, kWinograd, kDirect, kDense };
void set_conv2d_algorithm(Conv2dAlgorithm algorithm);
Conv2dAlgorithm conv2d_algorithm();

// Upper bound on the convolutions' im2col buffer (default 64 MiB): the minibatch is cut into
// chunks of images whose columns fit (at least one image per chunk).
void set_conv2d_workspace_limit(int64_t bytes);
int64_t conv2d_workspace_limit();

// Whether bfloat16 products run on AVX512_BF16 pair dot products in this build and on this CPU
// (Note [bfloat16 pair products] in core/native/gemm/gemm_packed.h) rather than widened to float32.
bool bf16_pair_products();

}  // namespace gr::backends::cpu
