// ModuleList and ModuleDict: containers that register their modules (so parameters(),
// state_dict() and to() reach them) without a forward of their own; entries are named
// "0", "1", ... in a ModuleList and by key in a ModuleDict, as PyTorch's.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "nn/module.h"
#include "nn/module_holder.h"

namespace gr::nn {

class ModuleListImpl : public Module {
 public:
  ModuleListImpl() : Module("gr::nn::ModuleList") {}
  template <class... Modules>
  explicit ModuleListImpl(Modules&&... modules) : Module("gr::nn::ModuleList") {
    (push_back(std::forward<Modules>(modules)), ...);
  }

  void push_back(std::shared_ptr<Module> module);
  template <class Impl>
  void push_back(const ModuleHolder<Impl>& module) {
    push_back(std::shared_ptr<Module>(module.ptr()));
  }
  // Appends every module of a container of modules (another ModuleList, a vector of them).
  template <class Container>
  void extend(const Container& container) {
    for (const auto& module : container) push_back(module);
  }
  // Inserts before position `index` (0 <= index <= size()); later entries are renamed.
  void insert(size_t index, std::shared_ptr<Module> module);
  template <class Impl>
  void insert(size_t index, const ModuleHolder<Impl>& module) {
    insert(index, std::shared_ptr<Module>(module.ptr()));
  }

  std::shared_ptr<Module> operator[](size_t index) const;
  std::shared_ptr<Module> ptr(size_t index) const { return (*this)[index]; }
  // The entry as its Impl type; throws if it is not one.
  template <class T>
  std::shared_ptr<T> ptr(size_t index) const {
    auto m = std::dynamic_pointer_cast<T>((*this)[index]);
    GR_CHECK(m != nullptr, "ModuleList: module ", index, " (", (*this)[index]->name(), ") is not of the requested type");
    return m;
  }
  template <class T>
  T& at(size_t index) const {
    return *ptr<T>(index);
  }
  size_t size() const { return modules_.size(); }
  bool is_empty() const { return modules_.empty(); }
  auto begin() const { return modules_.begin(); }
  auto end() const { return modules_.end(); }

  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override;
  void pretty_print(std::ostream& out) const override { out << "gr::nn::ModuleList"; }

 private:
  std::vector<std::shared_ptr<Module>> modules_;
};
GR_MODULE(ModuleList);

class ModuleDictImpl : public Module {
 public:
  ModuleDictImpl() : Module("gr::nn::ModuleDict") {}
  explicit ModuleDictImpl(const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& modules);
  explicit ModuleDictImpl(const OrderedDict<std::shared_ptr<Module>>& modules);

  // Adds `module` under `key`, or replaces the module registered there (keeping its place).
  void insert(const std::string& key, std::shared_ptr<Module> module);
  template <class Impl>
  void insert(const std::string& key, const ModuleHolder<Impl>& module) {
    insert(key, std::shared_ptr<Module>(module.ptr()));
  }
  // Inserts or replaces every (key, module) of a container of pairs, or of another ModuleDict.
  template <class Container>
  void update(const Container& container) {
    for (const auto& item : container) insert(item.first, item.second);
  }

  std::shared_ptr<Module> operator[](const std::string& key) const;
  template <class T>
  std::shared_ptr<T> ptr(const std::string& key) const {
    auto m = std::dynamic_pointer_cast<T>((*this)[key]);
    GR_CHECK(m != nullptr, "ModuleDict: module '", key, "' (", (*this)[key]->name(), ") is not of the requested type");
    return m;
  }
  std::shared_ptr<Module> ptr(const std::string& key) const { return (*this)[key]; }
  template <class T>
  T& at(const std::string& key) const {
    return *ptr<T>(key);
  }
  bool contains(const std::string& key) const { return named_children().contains(key); }
  size_t size() const { return named_children().size(); }
  bool is_empty() const { return named_children().is_empty(); }
  std::vector<std::string> keys() const { return named_children().keys(); }
  std::vector<std::shared_ptr<Module>> values() const { return named_children().values(); }
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> items() const;
  // Iterates OrderedDict items: item.key(), item.value().
  auto begin() const { return named_children().begin(); }
  auto end() const { return named_children().end(); }

  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override;
  void pretty_print(std::ostream& out) const override { out << "gr::nn::ModuleDict"; }
};
GR_MODULE(ModuleDict);

}  // namespace gr::nn
