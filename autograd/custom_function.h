// Custom autograd functions, as libtorch's torch::autograd::Function<T>: a struct with a
// static forward(AutogradContext*, ...) and a static backward(AutogradContext*,
// variable_list), called through T::apply(...). See Note [Custom functions].
#pragma once

#include <memory>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "autograd/engine.h"
#include "autograd/function.h"
#include "core/ivalue.h"

namespace gr::autograd {

using tensor_list = variable_list;  // libtorch spells it both ways

// Note [Custom functions]
// T::apply(args...) runs T::forward(ctx, args...) with grad mode off. Its tensor arguments
// (Tensor, or each element of a variable_list) are the node's inputs, in order; other
// arguments count as inputs without a gradient. Its results (a Tensor or a variable_list)
// get a node running T::backward(ctx, grads), which returns one gradient per forward
// argument (undefined for non-tensor arguments and for inputs without a gradient; more
// trailing undefined ones are allowed). needs_input_grad(i) counts tensor inputs only, as
// libtorch's does. Saved tensors follow Note [Saved outputs]: a saved result of forward is
// rebuilt with this node as grad_fn, so a backward written with gr:: ops is itself
// differentiable (create_graph). mark_dirty: inputs changed in place and returned;
// mark_non_differentiable: results that get no gradient; set_materialize_grads(false):
// backward sees undefined gradients for results nobody used instead of zeros.
struct AutogradContext {
  AutogradContext() = default;
  AutogradContext(const AutogradContext&) = delete;
  AutogradContext& operator=(const AutogradContext&) = delete;

  // Values for backward (double, int64, bool, string or Tensor).
  std::unordered_map<std::string, IValue> saved_data;

  // Tensors for backward: inputs or results of forward, with version checks.
  void save_for_backward(variable_list to_save);
  // The saved tensors, as they were saved; fails after the graph was freed.
  variable_list get_saved_variables() const;
  void mark_dirty(const variable_list& inputs);
  void mark_non_differentiable(const variable_list& outputs);
  void set_materialize_grads(bool value) { materialize_grads_ = value; }
  // Whether tensor input i wants a gradient (in backward: from this backward pass).
  bool needs_input_grad(size_t index) const;

 private:
  template <class T>
  friend struct Function;
  template <class T>
  friend struct CppNode;
  friend struct CustomFunctionState;

  variable_list to_save_;
  std::vector<SavedTensor> saved_;
  bool has_freed_buffers_ = false;
  std::unordered_set<const TensorImpl*> dirty_, non_differentiable_;
  bool materialize_grads_ = true;
  bool in_backward_ = false;
  std::weak_ptr<Node> grad_fn_;
};

// What apply() and the node share, outside the templates (custom_function.cpp).
struct CustomFunctionState {
  // Attaches `node` (null when nothing needs a gradient) to forward's results and saves
  // ctx's tensors; returns the results as callers see them.
  static variable_list wrap_outputs(AutogradContext& ctx, const variable_list& inputs, variable_list outputs,
                                    const std::shared_ptr<Node>& node, std::vector<InputMeta>* output_meta);
  // Maps backward's results (one per forward argument) to the node's edges.
  static variable_list collect_grads(const std::string& name, const std::vector<bool>& is_variable_input,
                                     variable_list grads);
  static variable_list materialize(const AutogradContext& ctx, const std::vector<InputMeta>& output_meta,
                                   variable_list grads);
  static void release(AutogradContext& ctx);
  static std::string node_name(const char* mangled_type_name);
  static void set_in_backward(AutogradContext& ctx, bool value) { ctx.in_backward_ = value; }
};

template <class T>
struct CppNode final : public Node {
  std::string name() const override { return CustomFunctionState::node_name(typeid(T).name()); }
  TensorList apply(TensorList&& grads) override {
    variable_list in = CustomFunctionState::materialize(ctx_, output_meta_, std::move(grads));
    CustomFunctionState::set_in_backward(ctx_, true);
    variable_list out;
    try {
      out = T::backward(&ctx_, std::move(in));
    } catch (...) {
      CustomFunctionState::set_in_backward(ctx_, false);
      throw;
    }
    CustomFunctionState::set_in_backward(ctx_, false);
    return CustomFunctionState::collect_grads(name(), is_variable_input_, std::move(out));
  }
  void release_saved() override { CustomFunctionState::release(ctx_); }

  AutogradContext ctx_;
  std::vector<bool> is_variable_input_;
  std::vector<InputMeta> output_meta_;
};

namespace detail {
// Flattens apply()'s arguments into tensor inputs (libtorch's extract_vars).
struct ExtractVariables {
  std::vector<bool>& is_variable;
  variable_list& variables;
  void operator()(const Tensor& t) {
    is_variable.push_back(true);
    variables.push_back(t);
  }
  void operator()(const variable_list& list) {
    for (const Tensor& t : list) (*this)(t);
  }
  template <class U>
  void operator()(const U&) {
    is_variable.push_back(false);
  }
};

inline variable_list to_output_list(Tensor t) { return {std::move(t)}; }
inline variable_list to_output_list(variable_list list) { return list; }
}  // namespace detail

template <class T>
struct Function {
  // Runs T::forward and records T::backward for its results; returns what forward returns
  // (a Tensor or a variable_list). See Note [Custom functions].
  template <class X = T, class... Args>
  static auto apply(Args&&... args) {
    using Result = decltype(X::forward(static_cast<AutogradContext*>(nullptr), std::forward<Args>(args)...));
    static_assert(std::is_same_v<Result, Tensor> || std::is_same_v<Result, variable_list>,
                  "Function<T>::forward must return a Tensor or a variable_list");
    auto node = std::make_shared<CppNode<X>>();
    variable_list inputs;
    detail::ExtractVariables extract{node->is_variable_input_, inputs};
    (extract(args), ...);
    const bool executable = needs_grad_list(inputs);
    if (executable)
      for (const Tensor& t : inputs) node->add_next_edge(gradient_edge(t), input_meta_of(t));
    node->ctx_.grad_fn_ = node;
    Result result;
    {
      AutoGradMode grad_mode(false);
      result = X::forward(&node->ctx_, std::forward<Args>(args)...);
    }
    variable_list outputs = CustomFunctionState::wrap_outputs(node->ctx_, inputs, detail::to_output_list(result),
                                                              executable ? node : nullptr, &node->output_meta_);
    if constexpr (std::is_same_v<Result, Tensor>) return outputs[0];
    else return outputs;
  }
};

}  // namespace gr::autograd
