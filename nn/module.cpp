// Module registration, traversal, modes, state_dict and printing.
#include "nn/module.h"

#include <algorithm>
#include <sstream>

#include "autograd/grad_mode.h"
#include "core/native/copy/copy.h"

namespace gr::nn {

Module::Module(std::string name) : name_(std::move(name)) {}

void Module::check_child_name(const std::string& name, const char* op) const {
  GR_CHECK(!name.empty(), op, ": name must not be empty");
  GR_CHECK(name.find('.') == std::string::npos, op, ": name '", name, "' must not contain a dot");
  GR_CHECK(!parameters_.contains(name) && !buffers_.contains(name) && !children_.contains(name), op, ": name '", name,
           "' is already registered in ", name_);
}

Tensor& Module::register_parameter(std::string name, Tensor tensor, bool requires_grad) {
  check_child_name(name, "register_parameter");
  if (tensor.defined()) {
    GR_CHECK(tensor.is_leaf(), "register_parameter: '", name, "' must be a leaf tensor (detach() it first)");
    if (requires_grad) tensor.set_requires_grad(true);
  }
  return parameters_.insert(std::move(name), std::move(tensor));
}

Tensor& Module::register_buffer(std::string name, Tensor tensor, bool persistent) {
  check_child_name(name, "register_buffer");
  if (!persistent) non_persistent_.push_back(name);
  return buffers_.insert(std::move(name), std::move(tensor));
}

void Module::replace_module(const std::string& name, std::shared_ptr<Module> module) {
  GR_CHECK(children_.contains(name), "replace_module: ", name_, " has no child named '", name, "'");
  GR_CHECK(module != nullptr, "replace_module: module '", name, "' is null");
  children_[name] = std::move(module);
}

void Module::collect(const std::string& prefix, bool recurse, bool params, bool persistent_only,
                     OrderedDict<Tensor>& out, std::vector<const TensorImpl*>& seen) const {
  const OrderedDict<Tensor>& own = params ? parameters_ : buffers_;
  for (const auto& [name, t] : own) {
    if (!t.defined()) continue;
    if (persistent_only && std::find(non_persistent_.begin(), non_persistent_.end(), name) != non_persistent_.end())
      continue;
    if (std::find(seen.begin(), seen.end(), t.unsafe_impl()) != seen.end()) continue;  // shared: once
    seen.push_back(t.unsafe_impl());
    out.insert(prefix + name, t);
  }
  if (!recurse) return;
  for (const auto& [name, child] : children_)
    child->collect(prefix + name + ".", true, params, persistent_only, out, seen);
}

OrderedDict<Tensor> Module::named_parameters(bool recurse) const {
  OrderedDict<Tensor> out;
  std::vector<const TensorImpl*> seen;
  collect("", recurse, true, false, out, seen);
  return out;
}

OrderedDict<Tensor> Module::named_buffers(bool recurse) const {
  OrderedDict<Tensor> out;
  std::vector<const TensorImpl*> seen;
  collect("", recurse, false, false, out, seen);
  return out;
}

TensorList Module::parameters(bool recurse) const { return named_parameters(recurse).values(); }
TensorList Module::buffers(bool recurse) const { return named_buffers(recurse).values(); }

std::vector<std::shared_ptr<Module>> Module::children() const { return children_.values(); }

void Module::collect_modules(const std::string& prefix, OrderedDict<std::shared_ptr<Module>>& out) {
  for (const auto& [name, child] : children_) {
    std::string qualified = prefix.empty() ? name : prefix + "." + name;
    out.insert(qualified, child);
    child->collect_modules(qualified, out);
  }
}

OrderedDict<std::shared_ptr<Module>> Module::named_modules(bool include_self) {
  OrderedDict<std::shared_ptr<Module>> out;
  if (include_self) {
    // A module not owned by a shared_ptr (e.g. on the stack) is listed without ownership.
    std::shared_ptr<Module> self = weak_from_this().lock();
    out.insert("", self ? self : std::shared_ptr<Module>(std::shared_ptr<Module>{}, this));
  }
  collect_modules("", out);
  return out;
}

std::vector<std::shared_ptr<Module>> Module::modules(bool include_self) { return named_modules(include_self).values(); }

void Module::train(bool on) {
  training_ = on;
  for (const auto& [name, child] : children_) child->train(on);
}

void Module::zero_grad(bool set_to_none) {
  for (Tensor& p : parameters()) {
    Tensor& g = p.mutable_grad();
    if (!g.defined()) continue;
    if (set_to_none) {
      g = Tensor();
    } else {
      NoGradGuard no_grad;
      g = g.detach();
      native::fill_(g, 0);
    }
  }
}

void Module::apply(const std::function<void(Module&)>& fn) {
  fn(*this);
  for (const auto& [name, child] : children_) child->apply(fn);
}

namespace {
// Rewrites t's metadata in place to hold `converted`, keeping the same TensorImpl (so
// optimizers and DDP that hold the parameter see the change) and its autograd flags.
void assign_in_place(Tensor& t, const Tensor& converted) {
  TensorImpl* impl = t.unsafe_impl();
  const TensorImpl* src = converted.unsafe_impl();
  impl->storage = src->storage;
  impl->sizes = src->sizes;
  impl->strides = src->strides;
  impl->offset = src->offset;
  impl->dtype = src->dtype;
  if (impl->autograd) impl->autograd->grad = Tensor();
}
}  // namespace

void Module::to(Device device) {
  apply([device](Module& m) {
    for (auto& [n, t] : m.parameters_)
      if (t.defined()) assign_in_place(t, native::to_device(t, device));
    for (auto& [n, t] : m.buffers_)
      if (t.defined()) assign_in_place(t, native::to_device(t, device));
  });
}

void Module::to(ScalarType dtype) {
  apply([dtype](Module& m) {
    for (auto& [n, t] : m.parameters_)
      if (t.defined() && t.is_floating_point()) assign_in_place(t, native::to_dtype(t, dtype));
    for (auto& [n, t] : m.buffers_)
      if (t.defined() && t.is_floating_point()) assign_in_place(t, native::to_dtype(t, dtype));
  });
}

RemovableHandle Module::register_forward_pre_hook(std::function<void(Module&)> hook) {
  GR_CHECK(hook != nullptr, "register_forward_pre_hook: the hook is empty");
  if (!hooks_) hooks_ = std::make_shared<detail::ModuleHooks>();
  const uint64_t id = hooks_->next_id++;
  hooks_->forward_pre.emplace_back(id, std::move(hook));
  return RemovableHandle(hooks_, id);
}

RemovableHandle Module::register_forward_hook(std::function<void(Module&, const TensorList&)> hook) {
  GR_CHECK(hook != nullptr, "register_forward_hook: the hook is empty");
  if (!hooks_) hooks_ = std::make_shared<detail::ModuleHooks>();
  const uint64_t id = hooks_->next_id++;
  hooks_->forward.emplace_back(id, std::move(hook));
  return RemovableHandle(hooks_, id);
}

RemovableHandle Module::register_state_dict_pre_hook(std::function<void(const Module&)> hook) {
  GR_CHECK(hook != nullptr, "register_state_dict_pre_hook: the hook is empty");
  if (!hooks_) hooks_ = std::make_shared<detail::ModuleHooks>();
  const uint64_t id = hooks_->next_id++;
  hooks_->state_dict_pre.emplace_back(id, std::move(hook));
  return RemovableHandle(hooks_, id);
}

void Module::run_forward_pre_hooks() {
  if (!hooks_) return;
  // A copy: a hook may remove itself (or register another) while the list is walked.
  const auto hooks = hooks_->forward_pre;
  for (const auto& [id, hook] : hooks) hook(*this);
}

void Module::run_forward_hooks(const TensorList& outputs) {
  if (!hooks_) return;
  const auto hooks = hooks_->forward;  // a copy, as for the pre-hooks
  for (const auto& [id, hook] : hooks) hook(*this, outputs);
}

void RemovableHandle::remove() {
  const std::shared_ptr<detail::ModuleHooks> hooks = hooks_.lock();
  if (!hooks) return;
  auto drop = [this](auto& list) {
    std::erase_if(list, [this](const auto& entry) { return entry.first == id_; });
  };
  drop(hooks->forward_pre);
  drop(hooks->forward);
  drop(hooks->state_dict_pre);
  hooks_.reset();
}

OrderedDict<Tensor> Module::state_dict() const {
  if (hooks_) {
    const auto hooks = hooks_->state_dict_pre;
    for (const auto& [id, hook] : hooks) hook(*this);
  }
  OrderedDict<Tensor> out;
  std::vector<const TensorImpl*> seen;
  collect("", true, true, false, out, seen);
  collect("", true, false, true, out, seen);
  return out;
}

void Module::load_state_dict(const OrderedDict<Tensor>& state, bool strict) {
  OrderedDict<Tensor> own = state_dict();
  std::vector<std::string> missing, unexpected;
  for (const auto& [key, t] : own)
    if (!state.contains(key)) missing.push_back(key);
  for (const auto& [key, t] : state)
    if (!own.contains(key)) unexpected.push_back(key);
  if (strict && (!missing.empty() || !unexpected.empty())) {
    std::ostringstream msg;
    msg << "load_state_dict: error(s) in loading state_dict for " << name_ << ":";
    auto list = [&](const char* what, const std::vector<std::string>& keys) {
      if (keys.empty()) return;
      msg << " " << what << " key(s):";
      for (size_t i = 0; i < keys.size(); ++i) msg << (i ? ", \"" : " \"") << keys[i] << '"';
      msg << '.';
    };
    list("Missing", missing);
    list("Unexpected", unexpected);
    GR_ERROR(msg.str());
  }
  // Check everything before copying anything, so a failed load changes nothing.
  for (const auto& [key, dst] : own) {
    const Tensor* src = state.find(key);
    if (!src) continue;
    GR_CHECK(src->defined(), "load_state_dict: tensor for '", key, "' is undefined");
    GR_CHECK(src->sizes() == dst.sizes(), "load_state_dict: size mismatch for ", key,
             ": copying a param with shape ", src->sizes(), " from checkpoint, the shape in current model is ",
             dst.sizes());
    GR_CHECK(src->scalar_type() == dst.scalar_type(), "load_state_dict: dtype mismatch for ", key, ": checkpoint has ",
             src->scalar_type(), ", the model has ", dst.scalar_type());
  }
  NoGradGuard no_grad;
  for (const auto& [key, dst] : own)
    if (const Tensor* src = state.find(key)) native::copy_(dst, *src);
}

void Module::pretty_print(std::ostream& out) const { out << name_; }

namespace {
void print_tree(std::ostream& out, const Module& m, int indent) {
  m.pretty_print(out);
  if (m.named_children().empty()) return;
  out << "(\n";
  for (const auto& [name, child] : m.named_children()) {
    out << std::string(indent + 2, ' ') << "(" << name << "): ";
    print_tree(out, *child, indent + 2);
    out << "\n";
  }
  out << std::string(indent, ' ') << ")";
}
}  // namespace

std::ostream& operator<<(std::ostream& out, const Module& module) {
  print_tree(out, module, 0);
  return out;
}

}  // namespace gr::nn

namespace gr::nn {

std::shared_ptr<Module> Module::clone(const std::optional<Device>& device) const {
  GR_CHECK(clone_factory_ != nullptr, "clone: ", name_,
           " cannot be cloned: it was not constructed through its module holder (e.g. Linear(3, 4)) or its "
           "constructor arguments cannot be copied");
  std::shared_ptr<Module> copy = clone_factory_();
  copy->copy_state_from(*this);
  if (device) copy->to(*device);
  return copy;
}

void Module::copy_state_from(const Module& other) {
  NoGradGuard no_grad;
  auto copy_tensors = [&](OrderedDict<Tensor>& mine, const OrderedDict<Tensor>& theirs, const char* kind) {
    GR_CHECK(mine.keys() == theirs.keys(), "clone: the fresh ", name_, " has other ", kind, " (",
             mine.size(), ") than the original (", theirs.size(), ")");
    for (size_t i = 0; i < mine.size(); ++i) {
      Tensor& dst = mine[i].value();
      const Tensor& src = theirs[i].value();
      if (!src.defined()) continue;
      GR_CHECK(dst.defined() && dst.unsafe_impl() != src.unsafe_impl(), "clone: ", kind, " '", mine[i].key(),
               "' of ", name_, " would be shared with the original (a submodule passed to the constructor?)");
      // The fresh module's own tensor (its members hold it) takes a copy of the original's
      // storage, dtype and device.
      assign_in_place(dst, src.detach().clone());
      dst.set_requires_grad(src.requires_grad());
    }
  };
  copy_tensors(parameters_, other.parameters_, "parameter");
  copy_tensors(buffers_, other.buffers_, "buffer");
  training_ = other.training_;
  GR_CHECK(children_.keys() == other.children_.keys(), "clone: the fresh ", name_,
           " has other submodules than the original");
  for (size_t i = 0; i < children_.size(); ++i) {
    GR_CHECK(children_[i].value() != other.children_[i].value(), "clone: submodule '", children_[i].key(), "' of ",
             name_, " would be shared with the original (a submodule passed to the constructor?)");
    children_[i].value()->copy_state_from(*other.children_[i].value());
  }
}

}  // namespace gr::nn
