// Node: one backward step of the graph. It receives the gradients of its forward op's
// outputs and returns the gradients for its next edges (the forward op's inputs).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace gr::autograd {

class Node;

// Where a gradient goes: input slot `input_nr` of `node` (null node = nowhere).
struct Edge {
  std::shared_ptr<Node> node;
  uint32_t input_nr = 0;
  bool valid() const { return node != nullptr; }
};

// Shape, dtype and device of a forward input, so the engine can check each gradient.
struct InputMeta {
  std::vector<int64_t> sizes;
  ScalarType dtype = kFloat32;
  Device device;
};

// Note [Node names]
// name() is PyTorch's grad_fn name for the same ATen overload, digit included: "<Op>Backward<N>"
// where N numbers the overloads of one op in ATen's derivatives.yaml ("SumBackward0" for sum(),
// "SumBackward1" for sum(dim), "MulBackward1" for mul(Tensor, Scalar), "ConvolutionBackward0"
// for every convolution), and "AccumulateGrad" at leaves. The names are literals at each op's
// record() call; tests/autograd/test_grad_fn_names.cpp checks them against PyTorch 2.15's
// (tests/data/make_grad_fn_names.py). A node of gradring's own with no PyTorch counterpart
// (a fused LinearBackward, MatmulBackward, PadCircularBackward, the conv double-backward nodes)
// has no digit. A custom Function<T> node is "<T>Backward" (see custom_function.h).
class Node : public std::enable_shared_from_this<Node> {
 public:
  Node();
  virtual ~Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  virtual std::string name() const = 0;
  // grads[i] is the gradient of forward output i (undefined = no gradient reached it).
  // Returns one gradient per next edge (undefined = none).
  virtual TensorList apply(TensorList&& grads) = 0;
  // Frees saved tensors after a backward without retain_graph.
  virtual void release_saved() {}

  const std::vector<Edge>& next_edges() const { return next_edges_; }
  const std::vector<InputMeta>& input_meta() const { return input_meta_; }
  void add_next_edge(Edge edge, InputMeta meta);
  // Later nodes run first in backward; see Note [Backward order].
  uint64_t sequence_nr() const { return sequence_nr_; }
  uint32_t num_outputs() const { return num_outputs_; }
  void set_num_outputs(uint32_t n) { num_outputs_ = n; }

  // Hooks on forward output `output_nr` (tensor hooks of non-leaf tensors).
  size_t add_pre_hook(uint32_t output_nr, TensorHook hook);
  bool remove_pre_hook(size_t handle);
  void run_pre_hooks(TensorList& grads) const;

  // Where the forward op that made this node was called (anomaly mode only, else empty).
  const std::string& forward_trace() const { return forward_trace_; }

 protected:
  uint64_t sequence_nr_;

 private:
  std::vector<Edge> next_edges_;
  std::vector<InputMeta> input_meta_;
  uint32_t num_outputs_ = 1;
  struct PreHook {
    size_t handle;
    uint32_t output_nr;
    TensorHook fn;
  };
  std::vector<PreHook> pre_hooks_;
  std::string forward_trace_;
  gr::detail::LiveCounter<gr::detail::kLiveAutogradNode> live_;  // Note [Live objects]
};

// The node whose apply() runs on this thread (null outside backward). A saved output
// unpacked in backward gets it back as grad_fn; see Note [Saved outputs].
Node* current_node();
class CurrentNodeGuard {
 public:
  explicit CurrentNodeGuard(Node* node);
  ~CurrentNodeGuard();
  CurrentNodeGuard(const CurrentNodeGuard&) = delete;
  CurrentNodeGuard& operator=(const CurrentNodeGuard&) = delete;

 private:
  Node* previous_;
};

// True when the backward now running wants a gradient for `edge` (a valid edge that leads
// to a tensor being differentiated); see Note [Pruned graphs] in engine.cpp.
bool edge_needed(const Edge& edge);

// A hook handle unique across the process.
size_t next_hook_handle();

}  // namespace gr::autograd
