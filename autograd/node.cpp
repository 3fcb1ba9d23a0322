// Node bookkeeping: sequence numbers, edges and pre-hooks.
#include "autograd/node.h"

#include <atomic>

#include "autograd/anomaly_mode.h"

namespace gr::autograd {

static std::atomic<uint64_t> g_next_sequence_nr{0};
static std::atomic<size_t> g_next_hook_handle{1};

size_t next_hook_handle() { return g_next_hook_handle.fetch_add(1); }

Node::Node() : sequence_nr_(g_next_sequence_nr.fetch_add(1)) {
  if (AnomalyMode::is_enabled()) forward_trace_ = current_backtrace(2);
}

static thread_local Node* t_current_node = nullptr;
Node* current_node() { return t_current_node; }
CurrentNodeGuard::CurrentNodeGuard(Node* node) : previous_(t_current_node) { t_current_node = node; }
CurrentNodeGuard::~CurrentNodeGuard() { t_current_node = previous_; }

void Node::add_next_edge(Edge edge, InputMeta meta) {
  next_edges_.push_back(std::move(edge));
  input_meta_.push_back(std::move(meta));
}

size_t Node::add_pre_hook(uint32_t output_nr, TensorHook hook) {
  size_t handle = next_hook_handle();
  pre_hooks_.push_back({handle, output_nr, std::move(hook)});
  return handle;
}

bool Node::remove_pre_hook(size_t handle) {
  for (auto it = pre_hooks_.begin(); it != pre_hooks_.end(); ++it) {
    if (it->handle == handle) {
      pre_hooks_.erase(it);
      return true;
    }
  }
  return false;
}

void Node::run_pre_hooks(TensorList& grads) const {
  for (const PreHook& h : pre_hooks_) {
    Tensor& g = grads[h.output_nr];
    if (!g.defined()) continue;
    Tensor replaced = h.fn(g);
    if (replaced.defined()) g = replaced;
  }
}

}  // namespace gr::autograd
