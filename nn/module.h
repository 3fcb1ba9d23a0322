// nn::Module: a tree of named parameters, buffers and submodules, in registration order
// (DDP's bucket order depends on it), with train/eval, zero_grad, apply and printing.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.h"
#include "nn/ordered_dict.h"

namespace gr::nn {

template <class Impl>
class ModuleHolder;
class Module;

namespace detail {
// A module's hooks (allocated at the first registration, so a module without hooks costs one
// null pointer); ids are unique across both lists.
struct ModuleHooks {
  uint64_t next_id = 0;
  std::vector<std::pair<uint64_t, std::function<void(Module&)>>> forward_pre;
  std::vector<std::pair<uint64_t, std::function<void(Module&, const TensorList&)>>> forward;
  std::vector<std::pair<uint64_t, std::function<void(const Module&)>>> state_dict_pre;
};
}  // namespace detail

// What Module's register_*_hook functions return (PyTorch's torch.utils.hooks.RemovableHandle):
// remove() takes the hook out; a second remove(), or one after the module is gone, does
// nothing. Dropping the handle keeps the hook.
class RemovableHandle {
 public:
  RemovableHandle() = default;
  void remove();

 private:
  friend class Module;
  RemovableHandle(std::weak_ptr<detail::ModuleHooks> hooks, uint64_t id) : hooks_(std::move(hooks)), id_(id) {}
  std::weak_ptr<detail::ModuleHooks> hooks_;
  uint64_t id_ = 0;
};

class Module : public std::enable_shared_from_this<Module> {
 public:
  // `name` is the type name printed by pretty_print, e.g. "gr::nn::Linear".
  explicit Module(std::string name = "Module");
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  const std::string& name() const { return name_; }

  // ---- registration (names may not contain '.'; a name is used once per kind) ----
  Tensor& register_parameter(std::string name, Tensor tensor, bool requires_grad = true);
  // Persistent buffers are part of state_dict(); non-persistent ones are not.
  Tensor& register_buffer(std::string name, Tensor tensor, bool persistent = true);
  template <class M>
  std::shared_ptr<M> register_module(std::string name, std::shared_ptr<M> module) {
    check_child_name(name, "register_module");
    GR_CHECK(module != nullptr, "register_module: module '", name, "' is null");
    children_.insert(std::move(name), module);
    return module;
  }
  template <class Impl>
  std::shared_ptr<Impl> register_module(std::string name, ModuleHolder<Impl> holder) {
    return register_module(std::move(name), holder.ptr());
  }
  // Swaps the child registered as `name` (keeps its position in the order).
  void replace_module(const std::string& name, std::shared_ptr<Module> module);

  // ---- traversal (registration order; "child.grandchild.weight" names) ----
  TensorList parameters(bool recurse = true) const;
  // Shared parameters appear once, under the first name they were reached by.
  OrderedDict<Tensor> named_parameters(bool recurse = true) const;
  TensorList buffers(bool recurse = true) const;
  OrderedDict<Tensor> named_buffers(bool recurse = true) const;
  std::vector<std::shared_ptr<Module>> children() const;
  const OrderedDict<std::shared_ptr<Module>>& named_children() const { return children_; }
  // This module first (named ""), then every descendant, depth first.
  std::vector<std::shared_ptr<Module>> modules(bool include_self = true);
  OrderedDict<std::shared_ptr<Module>> named_modules(bool include_self = true);

  // ---- modes and updates ----
  virtual void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }
  // Clears every parameter's gradient (set_to_none = true frees it, as torch does).
  void zero_grad(bool set_to_none = true);
  void apply(const std::function<void(Module&)>& fn);
  // Moves or converts every parameter and buffer in place (parameters stay the same leaves).
  void to(Device device);
  void to(ScalarType dtype);

  // ---- state ----
  // Parameters and persistent buffers by qualified name, sharing memory with the module.
  OrderedDict<Tensor> state_dict() const;
  // Copies values in. strict: every key must be present and no key may be unknown. Shape
  // and dtype must match exactly; errors name the key and both shapes/dtypes.
  void load_state_dict(const OrderedDict<Tensor>& state, bool strict = true);

  // ---- hooks (gradring extensions with PyTorch's Python names; libtorch has none) ----
  // `hook(module)` runs before every forward of this module that goes through its holder,
  // `child(x)` (ModuleHolder::operator()) or Sequential's forward (which calls its children
  // for the user), and NOT before a direct `child->forward(x)`:
  // forward is an ordinary method of each Impl, so the holder's call is the only place all
  // modules share. Hooks run in registration order and may remove themselves. A module
  // without hooks pays one predictable branch per call. DDP's gather_in_forward uses it
  // (Note [Gathers in forward] in distributed/ddp/ddp_gather.cpp).
  RemovableHandle register_forward_pre_hook(std::function<void(Module&)> hook);
  // `hook(module, outputs)` runs after every forward the pre-hooks run before (through the
  // holder or Sequential), with the tensors of the forward's result: itself for a Tensor, the
  // elements of a TensorList or of a tuple or pair of them, none for other results. PyTorch's
  // register_forward_hook, without the inputs. fully_shard uses it (distributed/fsdp/).
  RemovableHandle register_forward_hook(std::function<void(Module&, const TensorList& outputs)> hook);
  // `hook(module)` runs when state_dict() (and so load_state_dict()) starts on this module,
  // not when it runs on an ancestor: PyTorch's register_state_dict_pre_hook, without the
  // prefix and keep_vars arguments.
  RemovableHandle register_state_dict_pre_hook(std::function<void(const Module&)> hook);
  bool has_forward_pre_hooks() const noexcept { return hooks_ != nullptr && !hooks_->forward_pre.empty(); }
  bool has_forward_hooks() const noexcept { return hooks_ != nullptr && !hooks_->forward.empty(); }
  // Runs the forward pre-hooks and the forward hooks (ModuleHolder::operator() calls them).
  void run_forward_pre_hooks();
  void run_forward_hooks(const TensorList& outputs);

  // Prints one line describing this module (children are printed by operator<<).
  virtual void pretty_print(std::ostream& out) const;

  // ---- casting and copying ----
  // This module as T (an Impl, or a holder such as Linear meaning LinearImpl); nullptr if
  // it is not one.
  template <class T>
  auto* as() noexcept {
    if constexpr (requires { typename T::ContainedType; }) return dynamic_cast<typename T::ContainedType*>(this);
    else return dynamic_cast<T*>(this);
  }
  template <class T>
  const auto* as() const noexcept {
    if constexpr (requires { typename T::ContainedType; }) return dynamic_cast<const typename T::ContainedType*>(this);
    else return dynamic_cast<const T*>(this);
  }
  // A deep copy: new parameters and buffers with this module's values, requires_grad and
  // training mode, on `device` if given. See Note [Module clone].
  virtual std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const;
  // How clone() makes a fresh module of this one's structure (set by ModuleHolder).
  void set_clone_factory(std::function<std::shared_ptr<Module>()> factory) { clone_factory_ = std::move(factory); }

  // The module's own (non-recursive) parameters and buffers.
  const OrderedDict<Tensor>& own_parameters() const { return parameters_; }
  const OrderedDict<Tensor>& own_buffers() const { return buffers_; }

 protected:
  // Copies other's parameter and buffer values, requires_grad flags and training mode into
  // this module of the same structure, recursively; refuses to copy a tensor onto itself.
  void copy_state_from(const Module& other);

 private:
  void check_child_name(const std::string& name, const char* op) const;
  void collect(const std::string& prefix, bool recurse, bool params, bool persistent_only, OrderedDict<Tensor>& out,
               std::vector<const TensorImpl*>& seen) const;
  void collect_modules(const std::string& prefix, OrderedDict<std::shared_ptr<Module>>& out);

  std::string name_;
  bool training_ = true;
  OrderedDict<Tensor> parameters_;
  OrderedDict<Tensor> buffers_;
  std::vector<std::string> non_persistent_;
  OrderedDict<std::shared_ptr<Module>> children_;
  std::function<std::shared_ptr<Module>()> clone_factory_;
  std::shared_ptr<detail::ModuleHooks> hooks_;  // null until a hook is registered; clone() does not copy them
};

// Prints the module tree: "Name(...)" with "(child): ..." lines, like torch.
std::ostream& operator<<(std::ostream& out, const Module& module);

}  // namespace gr::nn
