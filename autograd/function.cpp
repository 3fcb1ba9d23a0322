// FunctionNode and the history-recording helpers.
#include "autograd/function.h"

#include "autograd/accumulate_grad.h"
#include "autograd/ops.h"
#include "core/factory.h"
#include "core/native/reduce/reduce.h"

namespace gr::autograd {

namespace {

// Stands in, under create_graph, for the missing derivative of a once-differentiable
// backward. Its edges lead wherever that backward's results depend on (the incoming
// gradients and the forward op's inputs), so a second backward aimed at any of them
// reaches it and fails. See Note [Double backward].
class OnceDifferentiableError final : public Node {
 public:
  explicit OnceDifferentiableError(std::string backward_name) : backward_name_(std::move(backward_name)) {}
  std::string name() const override { return "OnceDifferentiableBackward"; }
  TensorList apply(TensorList&&) override {
    GR_ERROR("the derivative of ", backward_name_, "'s backward is not implemented (once-differentiable): a second "
             "backward through it (create_graph) would be wrong. Write its backward with differentiable gr:: ops.");
  }

 private:
  std::string backward_name_;
};

TensorList guard_once_differentiable(const Node& node, TensorList results, const TensorList& grads) {
  auto err = std::make_shared<OnceDifferentiableError>(node.name());
  for (const Tensor& g : grads)
    if (g.defined() && g.requires_grad()) err->add_next_edge(gradient_edge(g), input_meta_of(g));
  for (size_t i = 0; i < node.next_edges().size(); ++i) err->add_next_edge(node.next_edges()[i], node.input_meta()[i]);
  err->set_num_outputs(static_cast<uint32_t>(results.size()));
  for (size_t i = 0; i < results.size(); ++i) {
    if (!results[i].defined()) continue;
    results[i] = results[i].detach();  // a fresh tensor: a result may be an incoming gradient itself
    AutogradMeta& meta = results[i].unsafe_impl()->autograd_meta();
    meta.grad_fn = err;
    meta.output_nr = static_cast<uint32_t>(i);
    meta.requires_grad = true;
  }
  return results;
}

}  // namespace

FunctionNode::FunctionNode(const char* name, BackwardFn fn, std::vector<InputMeta> output_meta,
                           bool once_differentiable)
    : name_(name), fn_(std::move(fn)), output_meta_(std::move(output_meta)), once_differentiable_(once_differentiable) {
  set_num_outputs(static_cast<uint32_t>(output_meta_.size()));
}

TensorList FunctionNode::apply(TensorList&& grads) {
  GR_CHECK(fn_ != nullptr, "Trying to backward through the graph a second time (", name_,
           "), or to directly access saved tensors after they have already been freed. Saved intermediate "
           "values of the graph are freed when you call backward(); pass retain_graph=true to backward "
           "the first time if you need to backward through it again.");
  for (size_t i = 0; i < grads.size(); ++i)
    if (!grads[i].defined())
      grads[i] = zeros(output_meta_[i].sizes, TensorOptions(output_meta_[i].dtype).device(output_meta_[i].device));
  std::vector<bool> needs;
  needs.reserve(next_edges().size());
  for (const Edge& e : next_edges()) needs.push_back(edge_needed(e));
  if (!once_differentiable_ || !GradMode::is_enabled()) return fn_(grads, needs);
  TensorList results;
  {
    NoGradGuard no_grad;
    results = fn_(grads, needs);
  }
  return guard_once_differentiable(*this, std::move(results), grads);
}

bool needs_grad_list(const TensorList& ts) {
  if (!GradMode::is_enabled()) return false;
  for (const Tensor& t : ts)
    if (t.defined() && t.requires_grad()) return true;
  return false;
}

std::shared_ptr<Node> grad_accumulator(const Tensor& leaf) {
  AutogradMeta& meta = leaf.unsafe_impl()->autograd_meta();
  if (auto existing = meta.grad_accumulator.lock()) return existing;
  auto acc = std::make_shared<AccumulateGrad>(leaf);
  meta.grad_accumulator = acc;
  return acc;
}

Edge gradient_edge(const Tensor& t) {
  if (!t.defined() || !t.requires_grad()) return {};
  if (t.grad_fn()) return {t.grad_fn(), t.output_nr()};
  return {grad_accumulator(t), 0};
}

InputMeta input_meta_of(const Tensor& t) {
  if (!t.defined()) return {};
  return {t.sizes().vec(), t.scalar_type(), t.device()};
}

namespace {
void record_node(const char* name, const TensorList& inputs, const TensorList& outputs, BackwardFn backward,
                 bool is_view, bool once_differentiable) {
  std::vector<InputMeta> out_meta;
  out_meta.reserve(outputs.size());
  for (const Tensor& o : outputs) out_meta.push_back(input_meta_of(o));
  auto node = std::make_shared<FunctionNode>(name, std::move(backward), std::move(out_meta), once_differentiable);
  for (const Tensor& in : inputs) node->add_next_edge(gradient_edge(in), input_meta_of(in));
  for (size_t i = 0; i < outputs.size(); ++i) {
    AutogradMeta& meta = outputs[i].unsafe_impl()->autograd_meta();
    meta.grad_fn = node;
    meta.output_nr = static_cast<uint32_t>(i);
    meta.requires_grad = true;
    meta.is_view = meta.is_view || is_view;
  }
}
}  // namespace

void record(const char* name, const TensorList& inputs, const TensorList& outputs, BackwardFn backward, bool is_view) {
  record_node(name, inputs, outputs, std::move(backward), is_view, false);
}

void record_once_differentiable(const char* name, const TensorList& inputs, const TensorList& outputs,
                                BackwardFn backward, bool is_view) {
  record_node(name, inputs, outputs, std::move(backward), is_view, true);
}

void check_inplace(const Tensor& self, const char* op) {
  GR_CHECK(!self.is_inference() || InferenceMode::is_enabled(), op,
           ": Inplace update to inference tensor outside InferenceMode is not allowed. You can make a clone to get a "
           "normal tensor before doing inplace update.");
  if (!GradMode::is_enabled() || !self.requires_grad()) return;
  GR_CHECK(!self.is_leaf(), op, ": a leaf Variable that requires grad is being used in an in-place operation. ",
           "Wrap it in gr::NoGradGuard (e.g. for parameter updates) or work on a clone().");
  GR_CHECK(!self.unsafe_impl()->autograd->is_view, op,
           ": in-place operation on a view of a tensor with autograd history is not supported; clone() the view "
           "first or use the out-of-place op.");
}

Tensor sum_to(const Tensor& g, IntArrayRef shape) {
  if (g.sizes() == shape) return g;
  if (!needs_grad(g)) return native::sum_to(g, shape);
  return gr::sum(g, native::sum_to_dims(g.sizes(), shape), true).reshape(shape);
}

}  // namespace gr::autograd
