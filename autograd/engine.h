// The backward engine: dependency counts over the graph, then a ready queue that runs
// each node once all gradients for it have arrived, summing where paths meet.
#pragma once

#include <functional>
#include <optional>

#include "core/tensor.h"

namespace gr::autograd {

using variable_list = std::vector<Tensor>;  // libtorch's name for a list of tensors

// Backpropagates `grad_tensors` (ones for one-element tensors when empty or undefined) from
// `tensors` into the .grad of every leaf that requires grad, or, when `inputs` is not
// empty, of those tensors only (leaves or not). retain_graph defaults to create_graph;
// create_graph records the backward pass itself, so the gradients can be differentiated
// again (see Note [Double backward] in function.h). libtorch's torch::autograd::backward.
void backward(const variable_list& tensors, const variable_list& grad_tensors = {},
              std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
              const variable_list& inputs = {});

// Returns d(outputs)/d(inputs) weighted by grad_outputs, without touching any .grad; only
// the part of the graph between them runs. allow_unused: an input the outputs do not
// depend on gets an undefined tensor instead of an error. libtorch's torch::autograd::grad,
// same argument order and defaults.
variable_list grad(const variable_list& outputs, const variable_list& inputs, const variable_list& grad_outputs = {},
                   std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
                   bool allow_unused = false);

// Runs `fn` on this thread when the backward pass now running has processed its whole graph
// (before backward() returns); callbacks run in the order queued, and may queue more. Only
// valid inside a backward pass (e.g. from a hook). DDP waits for its all-reduces here.
void queue_callback(std::function<void()> fn);
// True while this thread runs a backward pass.
bool in_backward();
// A number unique to the backward pass whose graph runs on this thread (the innermost one),
// or -1 outside one: torch._C._current_graph_task_id. gr::utils::checkpoint recomputes once
// per backward pass with it.
int64_t current_graph_task_id();

}  // namespace gr::autograd
