// Sequential forward, naming, indexing and cloning.
#include "nn/modules/sequential.h"

namespace gr::nn {

SequentialImpl::SequentialImpl(std::initializer_list<NamedAnyModule> named) : Module("gr::nn::Sequential") {
  for (const auto& entry : named) push_back(entry.name(), entry.module());
}

void SequentialImpl::push_back(std::string name, const AnyModule& module) {
  register_module(std::move(name), module.ptr());
  forwards_.push_back(module.forward_fn());
}

Tensor SequentialImpl::forward(const Tensor& x) {
  GR_CHECK(!forwards_.empty(), "Sequential: cannot call forward() on an empty Sequential");
  return forward_range(x, 0, forwards_.size());
}

Tensor SequentialImpl::forward_range(const Tensor& x, size_t begin, size_t end) {
  GR_CHECK(begin <= end && end <= forwards_.size(), "Sequential: modules [", begin, ", ", end,
           ") are out of range (size ", forwards_.size(), ")");
  Tensor y = x;
  const auto& children = named_children();
  for (size_t i = begin; i < end; ++i) {
    Module& m = *children[i].value();
    profiler::ScopedEvent span(profiler::enabled() ? m.name() : std::string(), "module");
    if (m.has_forward_pre_hooks()) [[unlikely]]
      m.run_forward_pre_hooks();  // as module(x) would: Sequential calls its children for the user
    y = forwards_[i](m, y);
    if (m.has_forward_hooks()) [[unlikely]]
      m.run_forward_hooks({y});
  }
  return y;
}

std::shared_ptr<Module> SequentialImpl::operator[](size_t i) const {
  GR_CHECK(i < forwards_.size(), "Sequential: index ", i, " is out of range (size ", forwards_.size(), ")");
  return named_children()[i].value();
}

std::shared_ptr<Module> SequentialImpl::clone(const std::optional<Device>& device) const {
  auto copy = std::make_shared<SequentialImpl>();
  for (size_t i = 0; i < forwards_.size(); ++i)
    copy->push_back(named_children()[i].key(), AnyModule(named_children()[i].value()->clone(device), forwards_[i]));
  copy->train(is_training());
  return copy;
}

}  // namespace gr::nn
