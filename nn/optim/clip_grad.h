// gr::nn::utils, as libtorch's torch::nn::utils: gradient clipping (clip_grad_norm_,
// clip_grad_value_) and flattening parameters into one vector and back.
#pragma once

#include <initializer_list>
#include <vector>

#include "core/tensor.h"

namespace gr::nn::utils {

// Scales all gradients together so that their total norm (as if concatenated) is at most
// max_norm: each is multiplied by min(1, max_norm / (total + 1e-6)), as torch. Returns the
// total norm before clipping; norm_type may be infinity. error_if_nonfinite: a NaN or
// infinite total norm is an error instead of scaling the gradients by it.
double clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);
double clip_grad_norm_(std::initializer_list<Tensor> parameters, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);
double clip_grad_norm_(const Tensor& parameter, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);

// The two halves of clip_grad_norm_ without waiting for the device (PyTorch 2.6's
// torch.nn.utils.get_total_norm and clip_grads_with_norm_): the total norm of `tensors` (as if
// concatenated) as a 0-d float64 tensor on their device, in a few multi-tensor passes on a GPU
// (Note [Foreach lists] in core/native/foreach.h); and the parameters' gradients scaled by
// min(1, max_norm / (total_norm + 1e-6)), the factor computed where total_norm is. A training
// step that does not need the norm on the host uses these (train_gpt does).
// error_if_nonfinite reads the norm, which waits for the device.
Tensor get_total_norm(const std::vector<Tensor>& tensors, double norm_type = 2.0, bool error_if_nonfinite = false);
void clip_grads_with_norm_(const std::vector<Tensor>& parameters, double max_norm, const Tensor& total_norm);

// Clamps every gradient element to [-clip_value, clip_value] in place.
void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value);
void clip_grad_value_(std::initializer_list<Tensor> parameters, double clip_value);
void clip_grad_value_(const Tensor& parameter, double clip_value);

// The parameters flattened and concatenated into one 1-d tensor (differentiable); all must
// be on one device.
Tensor parameters_to_vector(const std::vector<Tensor>& parameters);
// Copies consecutive slices of the 1-d `vec` into the parameters, in place (the parameters
// keep their storage, where libtorch makes them views of vec); vec's length must be the
// parameters' total number of elements.
void vector_to_parameters(const Tensor& vec, const std::vector<Tensor>& parameters);

}  // namespace gr::nn::utils
