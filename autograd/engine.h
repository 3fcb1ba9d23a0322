// The backward engine: dependency counts over the graph, then a ready queue that runs
// each node once all gradients for it have arrived, summing where paths meet.
#pragma once

#include "core/tensor.h"

namespace gr::autograd {

// Backpropagates `grad_roots` (ones for one-element roots when empty) from `roots` into
// the .grad of every leaf that requires grad.
void backward(const TensorList& roots, const TensorList& grad_roots = {}, bool retain_graph = false);

// Returns d(roots)/d(inputs) weighted by grad_roots, without touching any .grad.
// allow_unused: an input the roots do not depend on gets an undefined tensor instead of an error.
TensorList grad(const TensorList& roots, const TensorList& inputs, const TensorList& grad_roots = {},
                bool retain_graph = false, bool allow_unused = false);

}  // namespace gr::autograd
