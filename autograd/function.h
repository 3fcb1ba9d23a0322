// Recording history: the helpers every differentiable op uses to attach a backward node
// (a FunctionNode running a lambda) to its outputs.
#pragma once

#include <functional>
#include <vector>

#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "autograd/saved_tensor.h"

namespace gr::autograd {

// grads: one per output (zeros where none arrived); needs[i]: input i wants a gradient.
// Returns one gradient per input (undefined where not needed).
using BackwardFn = std::function<TensorList(const TensorList& grads, const std::vector<bool>& needs)>;

// Note [Double backward]
// A backward function maps the incoming gradients and the saved tensors to the inputs'
// gradients. When the engine runs with create_graph, grad mode stays on while nodes run, so
// a backward written with the differentiable gr:: ops (autograd/ops.h) records its own graph
// and the gradients it returns can be differentiated again (gradient penalties, Hessian-vector
// products). That is the default, and how every new op's backward is written (record()).
// Saved tensors keep their history (Note [Saved outputs] in saved_tensor.h), so the recorded
// backward connects to the forward graph.
// First-order speed: a backward may keep a fused native kernel (relu_backward,
// conv2d_backward, ...) for the case where nothing it reads requires grad, which is always
// so without create_graph: `if (!needs_grad(g[0], saved...)) return fused; else gr:: formula`.
// A backward that only has the native kernels is registered with record_once_differentiable():
// under create_graph it runs with grad mode off and its results get a node that fails
// ("the derivative of <name>'s backward is not implemented (once-differentiable)") when a
// second backward reaches it, instead of silently returning a zero second derivative.
class FunctionNode final : public Node {
 public:
  FunctionNode(const char* name, BackwardFn fn, std::vector<InputMeta> output_meta, bool once_differentiable = false);
  std::string name() const override { return name_; }
  TensorList apply(TensorList&& grads) override;
  void release_saved() override { fn_ = nullptr; }
  // See Note [Double backward].
  bool once_differentiable() const { return once_differentiable_; }

 private:
  const char* name_;
  BackwardFn fn_;
  std::vector<InputMeta> output_meta_;
  bool once_differentiable_;
};

// True when grad mode is on and any argument requires grad.
template <class... Ts>
bool needs_grad(const Ts&... ts) {
  return GradMode::is_enabled() && (... || (ts.defined() && ts.requires_grad()));
}
bool needs_grad_list(const TensorList& ts);

// Where a gradient for `t` flows: its grad_fn, or the accumulator of a leaf that
// requires grad, or nowhere.
Edge gradient_edge(const Tensor& t);
// The leaf's accumulator node (created on first use, shared while a graph holds it).
std::shared_ptr<Node> grad_accumulator(const Tensor& leaf);
InputMeta input_meta_of(const Tensor& t);

// Makes a FunctionNode with edges to `inputs` and sets it as grad_fn of `outputs`
// (output i gets output_nr i). `is_view` marks outputs that alias an input's storage.
// Works for in-place ops too: an input that is also an output keeps its old edge.
void record(const char* name, const TensorList& inputs, const TensorList& outputs, BackwardFn backward,
            bool is_view = false);
// The same for a backward that calls native kernels instead of differentiable ops; see
// Note [Double backward].
void record_once_differentiable(const char* name, const TensorList& inputs, const TensorList& outputs,
                                BackwardFn backward, bool is_view = false);

// Fails for in-place ops autograd cannot follow: on a leaf that requires grad, on a view
// of a tensor with history, or on an inference tensor outside InferenceMode.
void check_inplace(const Tensor& self, const char* op);

// ---- helpers for backward formulas (differentiable when grad mode is on) ----
// Sums a broadcast gradient back to `shape` (the inverse of expand).
Tensor sum_to(const Tensor& g, IntArrayRef shape);

}  // namespace gr::autograd
