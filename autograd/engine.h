// The backward engine: dependency counts over the graph, then a ready queue that runs
// each node once all gradients for it have arrived, summing where paths meet.
#pragma once

#include <functional>

#include "core/tensor.h"

namespace gr::autograd {

// Backpropagates `grad_roots` (ones for one-element roots when empty) from `roots` into
// the .grad of every leaf that requires grad.
void backward(const TensorList& roots, const TensorList& grad_roots = {}, bool retain_graph = false);

// Returns d(roots)/d(inputs) weighted by grad_roots, without touching any .grad.
// allow_unused: an input the roots do not depend on gets an undefined tensor instead of an error.
TensorList grad(const TensorList& roots, const TensorList& inputs, const TensorList& grad_roots = {},
                bool retain_graph = false, bool allow_unused = false);

// Runs `fn` on this thread when the backward pass now running has processed its whole graph
// (before backward() returns); callbacks run in the order queued, and may queue more. Only
// valid inside a backward pass (e.g. from a hook). DDP waits for its all-reduces here.
void queue_callback(std::function<void()> fn);
// True while this thread runs a backward pass.
bool in_backward();

}  // namespace gr::autograd
