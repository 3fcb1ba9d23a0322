// ModuleHolder and GR_MODULE: the `Linear` / `LinearImpl` pairing of libtorch, where
// `Linear` is a shared handle to a `LinearImpl` and `linear(x)` calls its forward.
#pragma once

#include <memory>
#include <type_traits>

#include "core/error.h"

namespace gr::nn {

template <class Impl>
class ModuleHolder {
 public:
  // Constructs the Impl with no arguments (only when it has a default constructor).
  ModuleHolder()
    requires std::is_default_constructible_v<Impl>
      : impl_(std::make_shared<Impl>()) {}
  // An empty holder, to be assigned later.
  ModuleHolder(std::nullptr_t) {}
  ModuleHolder(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
  // Constructs the Impl from the given arguments, e.g. Linear(784, 10).
  template <class First, class... Rest>
    requires(!std::is_same_v<std::decay_t<First>, ModuleHolder> &&
             !std::is_same_v<std::decay_t<First>, std::nullptr_t> &&
             !std::is_same_v<std::decay_t<First>, std::shared_ptr<Impl>> &&
             std::is_constructible_v<Impl, First, Rest...>)
  explicit ModuleHolder(First&& first, Rest&&... rest)
      : impl_(std::make_shared<Impl>(std::forward<First>(first), std::forward<Rest>(rest)...)) {}

  Impl* operator->() const { return checked(); }
  Impl& operator*() const { return *checked(); }
  const std::shared_ptr<Impl>& ptr() const { return impl_; }
  Impl* get() const { return impl_.get(); }
  bool is_empty() const { return impl_ == nullptr; }
  explicit operator bool() const { return impl_ != nullptr; }

  // module(x, ...) calls module->forward(x, ...).
  template <class... Args>
  decltype(auto) operator()(Args&&... args) const {
    return checked()->forward(std::forward<Args>(args)...);
  }

 private:
  Impl* checked() const {
    GR_CHECK(impl_ != nullptr, "accessing an empty module holder: it was constructed with nullptr and never assigned");
    return impl_.get();
  }
  std::shared_ptr<Impl> impl_;
};

}  // namespace gr::nn

// GR_MODULE(Linear) declares `Linear`, the holder of `LinearImpl`.
#define GR_MODULE(Name)                                       \
  class Name : public ::gr::nn::ModuleHolder<Name##Impl> {    \
   public:                                                    \
    using ::gr::nn::ModuleHolder<Name##Impl>::ModuleHolder;   \
  }
