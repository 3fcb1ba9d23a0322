// Sequential: runs its modules one after another; each must have Tensor forward(Tensor).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/profiler.h"
#include "nn/module.h"
#include "nn/module_holder.h"

namespace gr::nn {

class SequentialImpl : public Module {
 public:
  SequentialImpl() : Module("gr::nn::Sequential") {}
  // Sequential(Conv2d(1, 32, 3), ReLU(), ...): children are named "0", "1", ...
  template <class... Modules>
  explicit SequentialImpl(Modules&&... modules) : Module("gr::nn::Sequential") {
    (push_back(std::forward<Modules>(modules)), ...);
  }

  template <class Impl>
  void push_back(ModuleHolder<Impl> module) {
    push_back(std::to_string(forwards_.size()), module.ptr());
  }
  template <class Impl>
  void push_back(std::shared_ptr<Impl> module) {
    push_back(std::to_string(forwards_.size()), std::move(module));
  }
  template <class Impl>
  void push_back(std::string name, ModuleHolder<Impl> module) {
    push_back(std::move(name), module.ptr());
  }
  template <class Impl>
  void push_back(std::string name, std::shared_ptr<Impl> module) {
    register_module(name, module);
    forwards_.push_back([m = module.get()](const Tensor& x) {
      profiler::ScopedEvent span(profiler::enabled() ? m->name() : std::string(), "module");
      return m->forward(x);
    });
  }

  Tensor forward(const Tensor& x);
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

 private:
  std::vector<std::function<Tensor(const Tensor&)>> forwards_;
};
GR_MODULE(Sequential);

}  // namespace gr::nn
