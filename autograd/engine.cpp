// Backward execution: graph discovery and pruning, the ready queue, gradient checks and sums.
#include "autograd/engine.h"

#include <atomic>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "autograd/accumulate_grad.h"
#include "autograd/autocast.h"
#include "autograd/anomaly_mode.h"
#include "autograd/function.h"
#include "autograd/ops.h"
#include "core/factory.h"
#include "core/native/copy/copy.h"
#include "core/native/elementwise/elementwise.h"
#include "core/native/reduce/reduce.h"
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

// Where grad() (or backward() with non-leaf inputs) takes a gradient: the one arriving at
// input `input_nr` of `node`, stored in result slot `slot`.
struct Capture {
  const Node* node;
  uint32_t input_nr;
  size_t slot;
};

int64_t next_graph_task_id() {
  static std::atomic<int64_t> next{0};
  return next.fetch_add(1, std::memory_order_relaxed);
}

// Note [Pruned graphs]
// With inputs (grad(), or backward() with inputs) only the part of the graph that leads to
// them runs, as in PyTorch: a node "reaches" when it is a target (a capture point, or the
// accumulator of a backward() input) or one of its edges leads to a node that reaches. Only
// reaching nodes are queued; a queued node runs only when one of its edges leads further to
// a target (a capture point is not run for its own sake), or when it is an accumulator that
// was asked for; and a node computes gradients only for edges that reach (edge_needed, read
// by FunctionNode). So grad() never runs accumulators, never frees the part of the graph
// beyond its inputs, and computes no gradient nobody asked for.
struct GraphTask {
  const int64_t id = next_graph_task_id();
  bool keep_graph = false;
  bool create_graph = false;
  bool pruned = false;
  std::vector<Capture> captures;
  TensorList captured;
  std::unordered_set<const Node*> targets;
  std::unordered_set<const Node*> run_targets;  // accumulators of backward() inputs
  std::unordered_map<const Node*, bool> reaches;
  std::unordered_map<Node*, TensorList> buffers;
  std::unordered_map<Node*, int> dependencies;
  std::vector<std::shared_ptr<Node>> keep_alive;  // roots and targets made here

  bool reaching(const Node* n) const {
    if (!pruned) return true;
    auto it = reaches.find(n);
    return it != reaches.end() && it->second;
  }
  bool should_run(Node* n) const {
    if (!pruned) return true;
    if (run_targets.count(n) != 0) return true;
    for (const Edge& e : n->next_edges())
      if (e.valid() && reaching(e.node.get())) return true;
    return false;
  }
};

// The task whose node runs on this thread (nested backward passes stack).
thread_local GraphTask* t_task = nullptr;

// Sums gradients meeting at one input; differentiable under create_graph.
void accumulate(Tensor& slot, Tensor g) {
  if (!slot.defined()) slot = std::move(g);
  else if (GradMode::is_enabled()) slot = gr::add(slot, g);
  else slot = native::add(slot, g);
}

// The gradient a node returned for input i, checked against the input's metadata.
Tensor validate(const Node& node, size_t i, Tensor g) {
  const InputMeta& meta = node.input_meta()[i];
  GR_CHECK(g.device() == meta.device, "Function ", node.name(), " returned a gradient on ", g.device(),
           " for input ", i, " which lives on ", meta.device);
  if (g.sizes() != IntArrayRef(meta.sizes)) {
    // A broadcast gradient is summed back to the input's shape.
    bool ok = true;
    try {
      g = sum_to(g, meta.sizes);
    } catch (const Error&) {
      ok = false;
    }
    GR_CHECK(ok, "Function ", node.name(), " returned an invalid gradient at index ", i, " - got ", g.sizes(),
             " but expected shape compatible with ", IntArrayRef(meta.sizes));
  }
  if (g.scalar_type() != meta.dtype) g = needs_grad(g) ? g.to(meta.dtype) : native::to_dtype(g, meta.dtype);
  return g;
}

bool has_nan(const Tensor& t) {
  if (!t.is_floating_point()) return false;
  NoGradGuard no_grad;
  return native::sum(native::to_dtype(native::ne(t, t), kFloat64)).item<double>() > 0;
}

// What anomaly mode adds to an error raised in `node`: its name and where its forward op ran.
std::string anomaly_context(const Node& node) {
  std::string trace = node.forward_trace().empty() ? std::string("  (not recorded: the node was created before anomaly "
                                                                 "mode was enabled)\n")
                                                   : node.forward_trace();
  return "Error detected in " + node.name() + ". Traceback of forward call that caused the error:\n" + trace;
}

// Runs one node: its gradients out, checked for NaN in anomaly mode.
TensorList apply_node(Node& node, TensorList inputs) {
  CurrentNodeGuard current(&node);
  profiler::ScopedEvent span(profiler::enabled() ? node.name() : std::string(), "backward");
  if (!AnomalyMode::is_enabled()) return node.apply(std::move(inputs));
  TensorList outputs;
  try {
    outputs = node.apply(std::move(inputs));
  } catch (const Error& e) {
    throw Error(std::string(e.what()) + "\n" + anomaly_context(node), __FILE__, __LINE__);
  }
  if (AnomalyMode::should_check_nan())
    for (size_t i = 0; i < outputs.size(); ++i)
      GR_CHECK(!outputs[i].defined() || !has_nan(outputs[i]), "Function '", node.name(),
               "' returned nan values in its ", i, "th output.\n", anomaly_context(node));
  return outputs;
}

// Seeds the buffers with the roots' gradients; returns the roots' nodes.
std::vector<Node*> seed_roots(GraphTask& task, const TensorList& roots, const TensorList& grad_roots) {
  GR_CHECK(grad_roots.empty() || grad_roots.size() == roots.size(), "backward: got ", roots.size(), " tensors but ",
           grad_roots.size(), " gradients");
  std::vector<Node*> nodes;
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
    TensorList& buf = task.buffers[e.node.get()];
    buf.resize(e.node->num_outputs());
    accumulate(buf[e.input_nr], std::move(g));
    nodes.push_back(e.node.get());
    task.keep_alive.push_back(std::move(e.node));
  }
  return nodes;
}

// Counts, for each node, the edges leading to it from the reachable graph, and with
// targets marks the nodes that reach one (Note [Pruned graphs]).
void discover(GraphTask& task, const std::vector<Node*>& roots) {
  // Iterative depth-first search; a node is finished (post-order) after all its children.
  struct Frame {
    Node* node;
    size_t next;
  };
  std::vector<Frame> stack;
  std::unordered_set<Node*> seen;
  for (Node* root : roots) {
    if (!seen.insert(root).second) continue;
    stack.push_back({root, 0});
    while (!stack.empty()) {
      Frame& f = stack.back();
      const auto& edges = f.node->next_edges();
      if (f.next < edges.size()) {
        const Edge& e = edges[f.next++];
        if (!e.valid()) continue;
        ++task.dependencies[e.node.get()];
        if (seen.insert(e.node.get()).second) stack.push_back({e.node.get(), 0});
        continue;
      }
      if (task.pruned) {
        bool reaches = task.targets.count(f.node) != 0;
        for (const Edge& e : edges) reaches = reaches || (e.valid() && task.reaches[e.node.get()]);
        task.reaches[f.node] = reaches;
      }
      stack.pop_back();
    }
  }
}

void run(GraphTask& task, const TensorList& roots, const TensorList& grad_roots) {
  std::vector<Node*> root_nodes = seed_roots(task, roots, grad_roots);
  discover(task, root_nodes);

  std::priority_queue<Node*, std::vector<Node*>, ReadyOrder> ready;
  {
    std::unordered_set<Node*> queued;
    for (Node* n : root_nodes)
      if (task.dependencies[n] == 0 && task.reaching(n) && queued.insert(n).second) ready.push(n);
  }
  AutoGradMode grad_mode(task.create_graph);
  // Backward ops run in the dtypes their forward chose (Note [Autocast]).
  autocast::detail::ExcludeGuard no_autocast_cpu(kCPU), no_autocast_cuda(kCUDA);
  while (!ready.empty()) {
    Node* node = ready.top();
    ready.pop();
    TensorList inputs = std::move(task.buffers[node]);
    task.buffers.erase(node);
    inputs.resize(node->num_outputs());
    node->run_pre_hooks(inputs);

    for (const Capture& c : task.captures)
      if (c.node == node && inputs[c.input_nr].defined()) task.captured[c.slot] = inputs[c.input_nr];
    bool any_defined = false;
    for (const Tensor& t : inputs) any_defined = any_defined || t.defined();

    TensorList outputs;
    if (any_defined && task.should_run(node)) {
      outputs = apply_node(*node, std::move(inputs));
      if (!task.keep_graph) node->release_saved();
      GR_CHECK(outputs.empty() || outputs.size() == node->next_edges().size(), "Function ", node->name(),
               " returned ", outputs.size(), " gradients but expected ", node->next_edges().size());
    }
    const auto& edges = node->next_edges();
    for (size_t i = 0; i < edges.size(); ++i) {
      const Edge& e = edges[i];
      if (!e.valid() || !task.reaching(e.node.get())) continue;
      if (i < outputs.size() && outputs[i].defined()) {
        TensorList& buf = task.buffers[e.node.get()];
        buf.resize(e.node->num_outputs());
        accumulate(buf[e.input_nr], validate(*node, i, std::move(outputs[i])));
      }
      if (--task.dependencies[e.node.get()] == 0) ready.push(e.node.get());
    }
  }
}

// Callbacks queued by the backward pass running on this thread (see queue_callback).
thread_local std::vector<std::function<void()>>* t_final_callbacks = nullptr;

// Runs the graph, then the callbacks queued meanwhile; restores an outer pass's state (a
// hook or a node may run a nested backward).
void execute(GraphTask& task, const TensorList& roots, const TensorList& grad_roots) {
  std::vector<std::function<void()>> callbacks;
  auto* outer_callbacks = t_final_callbacks;
  auto* outer_task = t_task;
  t_final_callbacks = &callbacks;
  t_task = &task;
  try {
    run(task, roots, grad_roots);
    t_task = outer_task;
    for (size_t i = 0; i < callbacks.size(); ++i) callbacks[i]();  // may grow while running
  } catch (...) {
    t_final_callbacks = outer_callbacks;
    t_task = outer_task;
    throw;
  }
  t_final_callbacks = outer_callbacks;
}

// Makes `inputs` the task's targets: capture points, and for leaves in backward() their
// accumulators (which then run).
void set_targets(GraphTask& task, const TensorList& inputs, bool run_accumulators, const char* op) {
  task.pruned = true;
  task.captured.resize(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    GR_CHECK(inputs[i].defined() && inputs[i].requires_grad(), op, ": input ", i,
             " does not require grad (one of the differentiated tensors does not require grad)");
    Edge e = gradient_edge(inputs[i]);
    task.targets.insert(e.node.get());
    if (run_accumulators && inputs[i].is_leaf()) task.run_targets.insert(e.node.get());
    else task.captures.push_back({e.node.get(), e.input_nr, i});
    task.keep_alive.push_back(std::move(e.node));
  }
}

}  // namespace

bool edge_needed(const Edge& edge) { return edge.valid() && (t_task == nullptr || t_task->reaching(edge.node.get())); }

void queue_callback(std::function<void()> fn) {
  GR_CHECK(t_final_callbacks != nullptr, "queue_callback: only allowed while a backward pass runs (from a hook)");
  t_final_callbacks->push_back(std::move(fn));
}

bool in_backward() { return t_final_callbacks != nullptr; }

int64_t current_graph_task_id() { return t_task != nullptr ? t_task->id : -1; }

void backward(const variable_list& tensors, const variable_list& grad_tensors, std::optional<bool> retain_graph,
              bool create_graph, const variable_list& inputs) {
  GraphTask task;
  task.keep_graph = retain_graph.value_or(create_graph);
  task.create_graph = create_graph;
  if (!inputs.empty()) set_targets(task, inputs, /*run_accumulators=*/true, "backward");
  execute(task, tensors, grad_tensors);
  // Non-leaf inputs accumulate into their own .grad, as retain_grad() would.
  for (const Capture& c : task.captures) {
    Tensor& captured = task.captured[c.slot];
    if (!captured.defined()) continue;
    AutoGradMode grad_mode(create_graph);
    Tensor& g = inputs[c.slot].unsafe_impl()->autograd_meta().grad;
    g = g.defined() ? gr::add(g, captured) : (create_graph ? captured.clone() : native::clone(captured));
  }
}

variable_list grad(const variable_list& outputs, const variable_list& inputs, const variable_list& grad_outputs,
                   std::optional<bool> retain_graph, bool create_graph, bool allow_unused) {
  GR_CHECK(!inputs.empty(), "grad: requires non-empty inputs");
  GraphTask task;
  task.keep_graph = retain_graph.value_or(create_graph);
  task.create_graph = create_graph;
  set_targets(task, inputs, /*run_accumulators=*/false, "grad");
  execute(task, outputs, grad_outputs);
  for (size_t i = 0; i < task.captured.size(); ++i)
    GR_CHECK(allow_unused || task.captured[i].defined(), "grad: one of the differentiated tensors (input ", i,
             ") appears to not have been used in the graph; pass allow_unused=true if this is intended");
  return std::move(task.captured);
}

}  // namespace gr::autograd
