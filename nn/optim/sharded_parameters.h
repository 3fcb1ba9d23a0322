// The check an optimizer that needs whole parameters (LBFGS) makes against parameters that
// hold only a shard of a larger tensor (fully_shard's): Note [Sharded parameters].
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace gr::optim {

// Note [Sharded parameters]
// A parameter may hold only this rank's shard of a larger tensor (fully_shard's, in
// distributed/fsdp/). An element-wise optimizer steps a shard as it steps the whole, but one
// that needs the whole flat parameter (LBFGS: dot products and a line search over every
// element of every parameter) would optimize another function on each rank. nn/optim does not
// know distributed/, so whatever makes such parameters registers a check that names what a
// tensor is a shard of ("" if it is none), and an optimizer that needs whole parameters calls
// require_whole_parameters at construction: a gr::Error naming the parameter and the unit.
using ShardedParameterCheck = std::function<std::string(const Tensor& param)>;
void register_sharded_parameter_check(ShardedParameterCheck check);
void require_whole_parameters(const std::string& optimizer, const std::vector<Tensor>& params);

}  // namespace gr::optim
