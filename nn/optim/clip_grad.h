// clip_grad_norm_: scales all gradients together so their total norm is at most max_norm.
#pragma once

#include <limits>
#include <vector>

#include "core/tensor.h"

namespace gr::nn::utils {

// Returns the total norm of the gradients (as if concatenated) before clipping. norm_type
// may be infinity. Gradients are multiplied by min(1, max_norm / (total + 1e-6)), as torch.
double clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type = 2.0);

}  // namespace gr::nn::utils
