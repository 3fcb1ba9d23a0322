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
