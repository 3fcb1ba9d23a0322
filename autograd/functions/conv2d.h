// conv2d's differentiable pieces over precomputed Conv2dArgs (conv2d.cpp), which conv1d and
// the transposed convolutions are built from. See Note [Transposed convolution] in
// core/native/conv/conv2d.h and Note [Conv2d double backward] in conv2d.cpp.
#pragma once

#include "core/native/conv/conv2d.h"

namespace gr::autograd {

// conv2d(input, weight, bias) for the convolution `a` (4-D tensors that match it).
Tensor conv2d(const native::Conv2dArgs& a, const Tensor& input, const Tensor& weight, const Tensor& bias);
// Its input gradient for grad_output g (a transposed convolution of g by weight) and its
// weight gradient; both differentiable again.
Tensor conv2d_input_grad(const native::Conv2dArgs& a, const Tensor& g, const Tensor& weight);
Tensor conv2d_weight_grad(const native::Conv2dArgs& a, const Tensor& input, const Tensor& g);

}  // namespace gr::autograd
