// Custom autograd functions: the context, wrapping forward's results, checking backward's.
#include "autograd/custom_function.h"

#include <cxxabi.h>

#include <cstdlib>

#include "core/factory.h"

namespace gr::autograd {

void AutogradContext::save_for_backward(variable_list to_save) { to_save_ = std::move(to_save); }

variable_list AutogradContext::get_saved_variables() const {
  GR_CHECK(!has_freed_buffers_, "Trying to backward through the graph a second time, or to directly access saved "
                                "tensors after they have already been freed; pass retain_graph=true to backward the "
                                "first time if you need to backward through it again.");
  variable_list out;
  out.reserve(saved_.size());
  for (const SavedTensor& s : saved_) out.push_back(s.unpack());
  return out;
}

void AutogradContext::mark_dirty(const variable_list& inputs) {
  for (const Tensor& t : inputs) dirty_.insert(t.unsafe_impl());
}

void AutogradContext::mark_non_differentiable(const variable_list& outputs) {
  for (const Tensor& t : outputs) non_differentiable_.insert(t.unsafe_impl());
}

bool AutogradContext::needs_input_grad(size_t index) const {
  auto node = grad_fn_.lock();
  if (!node || node->next_edges().empty()) return false;  // nothing requires grad
  GR_CHECK(index < node->next_edges().size(), "needs_input_grad: index ", index, " is out of range for ",
           node->next_edges().size(), " tensor inputs");
  const Edge& e = node->next_edges()[index];
  return in_backward_ ? edge_needed(e) : e.valid();
}

variable_list CustomFunctionState::wrap_outputs(AutogradContext& ctx, const variable_list& inputs,
                                                variable_list outputs, const std::shared_ptr<Node>& node,
                                                std::vector<InputMeta>* output_meta) {
  auto is_input = [&inputs](const Tensor& t) {
    for (const Tensor& in : inputs)
      if (in.is_same(t)) return true;
    return false;
  };
  for (const TensorImpl* dirty : ctx.dirty_) {
    bool returned = false;
    for (const Tensor& o : outputs) returned = returned || o.unsafe_impl() == dirty;
    GR_CHECK(returned, "mark_dirty: a tensor marked dirty must be an input that forward also returns");
  }
  variable_list raw = outputs;  // as forward returned them, to match saved tensors against
  if (node) {
    node->set_num_outputs(static_cast<uint32_t>(outputs.size()));
    for (size_t i = 0; i < outputs.size(); ++i) {
      Tensor& o = outputs[i];
      output_meta->push_back(input_meta_of(o));
      if (!o.defined() || !o.is_floating_point() || ctx.non_differentiable_.count(o.unsafe_impl()) != 0) continue;
      const bool dirty = ctx.dirty_.count(o.unsafe_impl()) != 0;
      if (dirty) {
        GR_CHECK(!(o.is_leaf() && o.requires_grad()),
                 "a leaf Variable that requires grad has been used in an in-place operation (mark_dirty of a custom "
                 "Function)");
      } else if (is_input(o)) {
        o = o.detach();  // an input returned unchanged: a new tensor, so the input keeps its history
        raw[i] = o;
      }
      AutogradMeta& meta = o.unsafe_impl()->autograd_meta();
      meta.grad_fn = node;
      meta.output_nr = static_cast<uint32_t>(i);
      meta.requires_grad = true;
    }
  }
  ctx.saved_.clear();
  if (!node) {  // nothing will run backward
    ctx.to_save_.clear();
    return outputs;
  }
  for (const Tensor& t : ctx.to_save_) {
    uint32_t output_nr = 0;
    bool is_output = false;
    for (size_t i = 0; i < raw.size() && !is_output; ++i)
      if (t.defined() && raw[i].is_same(t) && raw[i].grad_fn() == node) {
        is_output = true;
        output_nr = static_cast<uint32_t>(i);
      }
    ctx.saved_.emplace_back(t, is_output, output_nr);
  }
  ctx.to_save_.clear();
  return outputs;
}

variable_list CustomFunctionState::collect_grads(const std::string& name, const std::vector<bool>& is_variable_input,
                                                 variable_list grads) {
  const size_t expected = is_variable_input.size();
  for (size_t i = expected; i < grads.size(); ++i)
    GR_CHECK(!grads[i].defined(), "function ", name, " backward returned an incorrect number of gradients (expected ",
             expected, ", got ", grads.size(), "); the extra ones must be undefined");
  GR_CHECK(grads.size() >= expected, "function ", name, " backward returned an incorrect number of gradients (expected ",
           expected, ", got ", grads.size(), ")");
  variable_list per_edge;
  for (size_t i = 0; i < expected; ++i) {
    if (is_variable_input[i]) {
      per_edge.push_back(std::move(grads[i]));
    } else {
      GR_CHECK(!grads[i].defined(), "function ", name, " backward returned a gradient different than an undefined "
                                    "tensor for input ", i, ", which is not a tensor");
    }
  }
  return per_edge;
}

variable_list CustomFunctionState::materialize(const AutogradContext& ctx, const std::vector<InputMeta>& output_meta,
                                               variable_list grads) {
  if (!ctx.materialize_grads_) return grads;
  for (size_t i = 0; i < grads.size() && i < output_meta.size(); ++i)
    if (!grads[i].defined())
      grads[i] = zeros(output_meta[i].sizes, TensorOptions(output_meta[i].dtype).device(output_meta[i].device));
  return grads;
}

void CustomFunctionState::release(AutogradContext& ctx) {
  ctx.saved_.clear();
  ctx.has_freed_buffers_ = true;
}

std::string CustomFunctionState::node_name(const char* mangled_type_name) {
  int status = 0;
  char* demangled = abi::__cxa_demangle(mangled_type_name, nullptr, nullptr, &status);
  std::string name = status == 0 && demangled ? demangled : mangled_type_name;
  std::free(demangled);
  // The unqualified name: "ns::(anonymous namespace)::MulConstant" -> "MulConstant".
  size_t colons = name.rfind("::", name.find('<'));
  if (colons != std::string::npos) name = name.substr(colons + 2);
  return name + "Backward";
}

}  // namespace gr::autograd
