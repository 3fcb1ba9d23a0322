// reachable_leaves: a depth-first walk over next_edges to the AccumulateGrad nodes.
#include "autograd/graph_walk.h"

#include <unordered_set>
#include <vector>

#include "autograd/accumulate_grad.h"
#include "autograd/node.h"

namespace gr::autograd {

TensorList reachable_leaves(const TensorList& outputs) {
  TensorList leaves;
  std::unordered_set<const TensorImpl*> found;
  auto add = [&](const Tensor& leaf) {
    if (found.insert(leaf.unsafe_impl()).second) leaves.push_back(leaf);
  };
  std::unordered_set<const Node*> seen;
  std::vector<Node*> stack;
  for (const Tensor& o : outputs) {
    if (!o.defined() || !o.requires_grad()) continue;
    if (!o.grad_fn()) add(o);
    else if (seen.insert(o.grad_fn().get()).second) stack.push_back(o.grad_fn().get());
  }
  while (!stack.empty()) {
    Node* node = stack.back();
    stack.pop_back();
    if (auto* acc = dynamic_cast<AccumulateGrad*>(node))
      if (Tensor leaf = acc->variable(); leaf.defined()) add(leaf);
    for (const Edge& e : node->next_edges())
      if (e.node && seen.insert(e.node.get()).second) stack.push_back(e.node.get());
  }
  return leaves;
}

}  // namespace gr::autograd
