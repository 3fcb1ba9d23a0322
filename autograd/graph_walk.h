// Walks of the autograd graph that run no backward: which leaves a backward from some
// outputs would reach (DDP's find_unused_parameters asks this after each forward).
#pragma once

#include "core/tensor.h"

namespace gr::autograd {

// The leaves that require grad and that a backward from `outputs` would give a gradient:
// those reached through the outputs' graphs, and outputs that are such leaves themselves.
// Each leaf once, in no particular order; undefined outputs and ones that need no grad add
// nothing.
TensorList reachable_leaves(const TensorList& outputs);

}  // namespace gr::autograd
