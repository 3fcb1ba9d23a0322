// Backward execution: dependency counting, the ready queue, gradient checks and sums.
#include "autograd/engine.h"

#include <queue>
#include <unordered_map>

#include "autograd/accumulate_grad.h"
#include "autograd/function.h"
#include "core/factory.h"
#include "core/native/copy.h"
#include "core/native/elementwise.h"
#include "core/native/reduce.h"
#include "core/profiler.h"

namespace gr::autograd {

namespace {

// Note [Backward order]
// Among ready nodes the one created last (highest sequence number) runs first, which
// walks the graph in reverse order of the forward pass; accumulators have the highest
// number so leaves receive their gradients as soon as they are final.
struct ReadyOrder {
  bool operator()(const Node* a, const Node* b) const { return a->sequence_nr() < b->sequence_nr(); }
};

struct Capture {
  const Node* node;
  uint32_t input_nr;
  size_t slot;
};

// The gradient a node returned for input i, checked against the input's metadata.
Tensor validate(const Node& node, size_t i, Tensor g) {
  const InputMeta& meta = node.input_meta()[i];
  GR_CHECK(g.device() == meta.device, "Function ", node.name(), " returned a gradient on ", g.device(),
           " for input ", i, " which lives on ", meta.device);
  if (g.sizes() != IntArrayRef(meta.sizes)) {
    // A broadcast gradient is summed back to the input's shape.
    bool ok = true;
    try {
      g = native::sum_to(g, meta.sizes);
    } catch (const Error&) {
      ok = false;
    }
    GR_CHECK(ok, "Function ", node.name(), " returned an invalid gradient at index ", i, " - got ", g.sizes(),
             " but expected shape compatible with ", IntArrayRef(meta.sizes));
  }
  if (g.scalar_type() != meta.dtype) g = native::to_dtype(g, meta.dtype);
  return g;
}

// Callbacks queued by the backward pass running on this thread (see queue_callback).
thread_local std::vector<std::function<void()>>* t_final_callbacks = nullptr;

// Runs the graph, then the callbacks queued meanwhile; restores an outer pass's queue (a
// hook may run a nested backward).
void execute_graph(const TensorList& roots, const TensorList& grad_roots, bool retain_graph,
                   const std::vector<Capture>& captures, TensorList* captured);

void execute(const TensorList& roots, const TensorList& grad_roots, bool retain_graph,
             const std::vector<Capture>& captures, TensorList* captured) {
  std::vector<std::function<void()>> callbacks;
  auto* outer = t_final_callbacks;
  t_final_callbacks = &callbacks;
  try {
    execute_graph(roots, grad_roots, retain_graph, captures, captured);
    for (size_t i = 0; i < callbacks.size(); ++i) callbacks[i]();  // may grow while running
  } catch (...) {
    t_final_callbacks = outer;
    throw;
  }
  t_final_callbacks = outer;
}

void execute_graph(const TensorList& roots, const TensorList& grad_roots, bool retain_graph,
                   const std::vector<Capture>& captures, TensorList* captured) {
  GR_CHECK(grad_roots.empty() || grad_roots.size() == roots.size(), "backward: got ", roots.size(), " tensors but ",
           grad_roots.size(), " gradients");
  std::unordered_map<Node*, TensorList> buffers;
  std::vector<std::shared_ptr<Node>> root_nodes;
  for (size_t i = 0; i < roots.size(); ++i) {
    const Tensor& r = roots[i];
    GR_CHECK(r.defined(), "backward: root tensor ", i, " is undefined");
    GR_CHECK(r.requires_grad(), "element ", i, " of tensors does not require grad and does not have a grad_fn");
    Tensor g = grad_roots.empty() ? Tensor() : grad_roots[i];
    if (!g.defined()) {
      GR_CHECK(r.numel() == 1, "grad can be implicitly created only for scalar outputs (got shape ", r.sizes(),
               "); pass a gradient to backward()");
      g = ones_like(r);
    } else {
      GR_CHECK(g.sizes() == r.sizes(), "backward: gradient has shape ", g.sizes(), " but the tensor has shape ",
               r.sizes());
    }
    Edge e = gradient_edge(r);
    TensorList& buf = buffers[e.node.get()];
    buf.resize(e.node->num_outputs());
    Tensor& slot = buf[e.input_nr];
    slot = slot.defined() ? native::add(slot, g) : g;
    root_nodes.push_back(e.node);
  }

  // Count, for each node, how many edges lead to it from the part of the graph we run.
  std::unordered_map<Node*, int> dependencies;
  {
    std::vector<Node*> stack;
    std::unordered_map<Node*, bool> seen;
    for (auto& n : root_nodes)
      if (!seen[n.get()]) seen[n.get()] = true, stack.push_back(n.get());
    while (!stack.empty()) {
      Node* n = stack.back();
      stack.pop_back();
      for (const Edge& e : n->next_edges()) {
        if (!e.valid()) continue;
        ++dependencies[e.node.get()];
        if (!seen[e.node.get()]) seen[e.node.get()] = true, stack.push_back(e.node.get());
      }
    }
  }

  // Keep nodes alive while they run even if the graph is released meanwhile.
  std::priority_queue<Node*, std::vector<Node*>, ReadyOrder> ready;
  {
    std::unordered_map<Node*, bool> queued;
    for (auto& n : root_nodes)
      if (dependencies[n.get()] == 0 && !queued[n.get()]) queued[n.get()] = true, ready.push(n.get());
  }
  NoGradGuard no_grad;
  while (!ready.empty()) {
    Node* node = ready.top();
    ready.pop();
    TensorList inputs = std::move(buffers[node]);
    buffers.erase(node);
    inputs.resize(node->num_outputs());
    node->run_pre_hooks(inputs);

    for (const Capture& c : captures)
      if (c.node == node && inputs[c.input_nr].defined()) (*captured)[c.slot] = inputs[c.input_nr];
    bool any_defined = false;
    for (const Tensor& t : inputs) any_defined = any_defined || t.defined();

    TensorList outputs;
    // In grad() mode accumulators never run: nothing is written to .grad.
    bool skip = !any_defined || (captured != nullptr && dynamic_cast<AccumulateGrad*>(node) != nullptr);
    if (!skip) {
      {
        profiler::ScopedEvent span(profiler::enabled() ? node->name() : std::string(), "backward");
        outputs = node->apply(std::move(inputs));
      }
      if (!retain_graph) node->release_saved();
      GR_CHECK(outputs.empty() || outputs.size() == node->next_edges().size(), "Function ", node->name(),
               " returned ", outputs.size(), " gradients but expected ", node->next_edges().size());
    }
    const auto& edges = node->next_edges();
    for (size_t i = 0; i < edges.size(); ++i) {
      const Edge& e = edges[i];
      if (!e.valid()) continue;
      if (i < outputs.size() && outputs[i].defined()) {
        Tensor g = validate(*node, i, std::move(outputs[i]));
        TensorList& buf = buffers[e.node.get()];
        buf.resize(e.node->num_outputs());
        Tensor& slot = buf[e.input_nr];
        slot = slot.defined() ? native::add(slot, g) : std::move(g);
      }
      if (--dependencies[e.node.get()] == 0) ready.push(e.node.get());
    }
  }
}

}  // namespace

void queue_callback(std::function<void()> fn) {
  GR_CHECK(t_final_callbacks != nullptr, "queue_callback: only allowed while a backward pass runs (from a hook)");
  t_final_callbacks->push_back(std::move(fn));
}

bool in_backward() { return t_final_callbacks != nullptr; }

void backward(const TensorList& roots, const TensorList& grad_roots, bool retain_graph) {
  execute(roots, grad_roots, retain_graph, {}, nullptr);
}

TensorList grad(const TensorList& roots, const TensorList& inputs, const TensorList& grad_roots, bool retain_graph,
                bool allow_unused) {
  std::vector<Capture> captures;
  std::vector<std::shared_ptr<Node>> keep;  // accumulators made here must outlive the run
  for (size_t i = 0; i < inputs.size(); ++i) {
    GR_CHECK(inputs[i].defined() && inputs[i].requires_grad(), "grad: input ", i, " does not require grad");
    Edge e = gradient_edge(inputs[i]);
    keep.push_back(e.node);
    captures.push_back({e.node.get(), e.input_nr, i});
  }
  TensorList result(inputs.size());
  execute(roots, grad_roots, retain_graph, captures, &result);
  for (size_t i = 0; i < result.size(); ++i)
    GR_CHECK(allow_unused || result[i].defined(), "grad: one of the differentiated tensors (input ", i,
             ") appears to not have been used in the graph; pass allow_unused=true if this is intended");
  return result;
}

}  // namespace gr::autograd
