// conv2d on CUDA, the kCUDA slots of conv2d_forward_stub / conv2d_backward_stub
// (core/native/conv/conv2d.h): cuDNN where the build has it, else im2col + cuBLAS GEMM + col2im.
// Where cuDNN answers NOT_SUPPORTED for a problem (or a tensor passes 2^31 elements, the
// limit of its 4-d descriptors) that problem runs on im2col as well. The switches below
// let tests and benchmarks run either path on the same device.
#pragma once

#include <cstddef>

namespace gr::cuda {

// Whether this build has cuDNN (found at configure time, see cuda_kernels/CMakeLists.txt).
bool cudnn_built();

// Whether conv2d uses cuDNN (when built with it). Default on; GRADRING_CUDNN=0 in the
// environment turns it off at startup, forcing the im2col path.
void set_cudnn_enabled(bool enabled);
bool cudnn_enabled();

// How cuDNN algorithms are chosen, once per problem (shapes, stride, padding, dilation,
// groups, dtype, device, pass): by cuDNN's heuristics (default), or, in benchmark mode, by
// timing every algorithm with cudnnFind*AlgorithmEx on the first call (which synchronizes
// the device then). GRADRING_CUDNN_BENCHMARK=1 turns benchmark mode on at startup.
void set_cudnn_benchmark(bool enabled);
bool cudnn_benchmark();

// Whether float32 convolutions may run on TF32 tensor cores (10-bit mantissa products, float
// accumulation), as PyTorch allows by default (torch.backends.cudnn.allow_tf32). Default off,
// as every float32 product here; GRADRING_CUDNN_TF32=1 turns it on at startup. For
// measurements beside PyTorch's defaults.
void set_cudnn_allow_tf32(bool enabled);
bool cudnn_allow_tf32();

// Upper bound on the scratch memory of one conv2d call (default 1 GiB; at startup
// GRADRING_CONV_WORKSPACE_MB): cuDNN skips algorithms needing more workspace, im2col cuts
// the minibatch into chunks whose columns fit (at least one image per chunk).
void set_conv2d_workspace_limit(size_t bytes);
size_t conv2d_workspace_limit();

// Problems (per pass) whose cuDNN algorithms have been chosen in this process; clearing
// makes the next call of each choose again (tests, benchmarks).
size_t conv2d_algo_cache_size();
void clear_conv2d_algo_cache();

// Which implementation ran the calling thread's last conv2d pass (tests check that the path
// they meant to exercise really ran). kMixed: a backward pass used cuDNN for some gradients
// and im2col for others.
enum class Conv2dPath { kNone, kCudnn, kIm2col, kMixed };
Conv2dPath last_conv2d_path();

}  // namespace gr::cuda
