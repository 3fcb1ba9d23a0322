// Sequential: runs its modules one after another; each must have Tensor forward(Tensor).
// Entries are named "0", "1", ... or by the caller: Sequential({{"conv", Conv2d(1, 8, 3)}, ...}).
#pragma once

#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "core/profiler.h"
#include "nn/module.h"
#include "nn/module_holder.h"

namespace gr::nn {

// A module with the forward Sequential calls, type-erased (the Impl is known only here).
class AnyModule {
 public:
  using Forward = std::function<Tensor(Module&, const Tensor&)>;
  template <class Impl>
  AnyModule(ModuleHolder<Impl> holder) : AnyModule(holder.ptr()) {}
  template <class Impl>
  AnyModule(std::shared_ptr<Impl> impl)
      : module_(impl), forward_([](Module& m, const Tensor& x) { return static_cast<Impl&>(m).forward(x); }) {
    GR_CHECK(module_ != nullptr, "Sequential: cannot add a null module");
  }
  AnyModule(std::shared_ptr<Module> module, Forward forward) : module_(std::move(module)), forward_(std::move(forward)) {}
  const std::shared_ptr<Module>& ptr() const { return module_; }
  const Forward& forward_fn() const { return forward_; }

 private:
  std::shared_ptr<Module> module_;
  Forward forward_;
};

// A (name, module) pair, for Sequential's named constructor.
class NamedAnyModule {
 public:
  template <class M>
  NamedAnyModule(std::string name, M&& module) : name_(std::move(name)), module_(std::forward<M>(module)) {}
  const std::string& name() const { return name_; }
  const AnyModule& module() const { return module_; }

 private:
  std::string name_;
  AnyModule module_;
};

class SequentialImpl : public Module {
 public:
  SequentialImpl() : Module("gr::nn::Sequential") {}
  // Sequential(Conv2d(1, 32, 3), ReLU(), ...): children are named "0", "1", ...
  template <class... Modules>
  explicit SequentialImpl(Modules&&... modules) : Module("gr::nn::Sequential") {
    (push_back(std::forward<Modules>(modules)), ...);
  }
  // Sequential({{"conv", Conv2d(1, 8, 3)}, {"relu", ReLU()}}): state_dict names "conv.weight".
  explicit SequentialImpl(std::initializer_list<NamedAnyModule> named);

  template <class Impl>
  void push_back(ModuleHolder<Impl> module) {
    push_back(std::to_string(forwards_.size()), AnyModule(module));
  }
  template <class Impl>
  void push_back(std::shared_ptr<Impl> module) {
    push_back(std::to_string(forwards_.size()), AnyModule(std::move(module)));
  }
  template <class Impl>
  void push_back(std::string name, ModuleHolder<Impl> module) {
    push_back(std::move(name), AnyModule(module));
  }
  template <class Impl>
  void push_back(std::string name, std::shared_ptr<Impl> module) {
    push_back(std::move(name), AnyModule(std::move(module)));
  }
  void push_back(std::string name, const AnyModule& module);

  Tensor forward(const Tensor& x);
  // Modules [begin, end) only, called as forward() calls them (checkpoint_sequential's segments).
  Tensor forward_range(const Tensor& x, size_t begin, size_t end);
  size_t size() const { return forwards_.size(); }
  bool is_empty() const { return forwards_.empty(); }
  // The i-th module, optionally cast to its Impl type (throws on a wrong type).
  std::shared_ptr<Module> operator[](size_t i) const;
  template <class Impl>
  std::shared_ptr<Impl> ptr(size_t i) const {
    auto m = std::dynamic_pointer_cast<Impl>((*this)[i]);
    GR_CHECK(m != nullptr, "Sequential: module ", i, " is not of the requested type");
    return m;
  }
  std::shared_ptr<Module> ptr(size_t i) const { return (*this)[i]; }
  // Clones every entry, keeping names and order.
  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override;

 private:
  std::vector<AnyModule::Forward> forwards_;
};

class Sequential : public ModuleHolder<SequentialImpl> {
 public:
  using ModuleHolder<SequentialImpl>::ModuleHolder;
  Sequential() : ModuleHolder<SequentialImpl>() {}
  Sequential(std::initializer_list<NamedAnyModule> named)
      : ModuleHolder<SequentialImpl>(std::make_shared<SequentialImpl>(named)) {}
};

}  // namespace gr::nn
