// ModuleList and ModuleDict: registration under PyTorch's names, indexing and cloning.
#include "nn/modules/modulelist.h"

namespace gr::nn {

void ModuleListImpl::push_back(std::shared_ptr<Module> module) {
  GR_CHECK(module != nullptr, "ModuleList: cannot add a null module");
  register_module(std::to_string(modules_.size()), module);
  modules_.push_back(std::move(module));
}

void ModuleListImpl::insert(size_t index, std::shared_ptr<Module> module) {
  GR_CHECK(index <= modules_.size(), "ModuleList: insert index ", index, " is out of range (size ", modules_.size(),
           ")");
  GR_CHECK(module != nullptr, "ModuleList: cannot insert a null module");
  if (index == modules_.size()) return push_back(std::move(module));
  // Shift the names up by one: the last entry gets a new name, the others move down a slot.
  register_module(std::to_string(modules_.size()), modules_.back());
  for (size_t i = modules_.size() - 1; i > index; --i) replace_module(std::to_string(i), modules_[i - 1]);
  replace_module(std::to_string(index), module);
  modules_.insert(modules_.begin() + static_cast<std::ptrdiff_t>(index), std::move(module));
}

std::shared_ptr<Module> ModuleListImpl::operator[](size_t index) const {
  GR_CHECK(index < modules_.size(), "ModuleList: index ", index, " is out of range (size ", modules_.size(), ")");
  return modules_[index];
}

std::shared_ptr<Module> ModuleListImpl::clone(const std::optional<Device>& device) const {
  auto copy = std::make_shared<ModuleListImpl>();
  for (const auto& m : modules_) copy->push_back(m->clone(device));
  copy->train(is_training());
  return copy;
}

ModuleDictImpl::ModuleDictImpl(const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& modules)
    : Module("gr::nn::ModuleDict") {
  update(modules);
}

ModuleDictImpl::ModuleDictImpl(const OrderedDict<std::shared_ptr<Module>>& modules) : Module("gr::nn::ModuleDict") {
  update(modules);
}

void ModuleDictImpl::insert(const std::string& key, std::shared_ptr<Module> module) {
  GR_CHECK(module != nullptr, "ModuleDict: cannot add a null module under '", key, "'");
  if (contains(key)) replace_module(key, std::move(module));
  else register_module(key, std::move(module));
}

std::shared_ptr<Module> ModuleDictImpl::operator[](const std::string& key) const {
  const std::shared_ptr<Module>* m = named_children().find(key);
  GR_CHECK(m != nullptr, "ModuleDict: no module named '", key, "' (keys: ", keys().size(), ")");
  return *m;
}

std::vector<std::pair<std::string, std::shared_ptr<Module>>> ModuleDictImpl::items() const {
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> out;
  for (const auto& item : named_children()) out.emplace_back(item.key(), item.value());
  return out;
}

std::shared_ptr<Module> ModuleDictImpl::clone(const std::optional<Device>& device) const {
  auto copy = std::make_shared<ModuleDictImpl>();
  for (const auto& item : named_children()) copy->insert(item.key(), item.value()->clone(device));
  copy->train(is_training());
  return copy;
}

}  // namespace gr::nn
