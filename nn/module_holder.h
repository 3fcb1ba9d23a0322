// ModuleHolder and GR_MODULE: the `Linear` / `LinearImpl` pairing of libtorch, where
// `Linear` is a shared handle to a `LinearImpl` and `linear(x)` calls its forward.
#pragma once

#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>

#include "core/error.h"
#include "core/tensor.h"

namespace gr::nn {

namespace detail {
// The tensors of a forward's result, for Module's forward hooks: a Tensor, a TensorList, or
// the tensors among a tuple's or pair's elements; nothing for any other result.
inline TensorList forward_outputs(const Tensor& t) { return {t}; }
inline TensorList forward_outputs(const TensorList& ts) { return ts; }
template <class T>
TensorList forward_outputs(const T&) {
  return {};
}
template <class... T>
TensorList forward_outputs(const std::tuple<T...>& tuple) {
  TensorList out;
  std::apply(
      [&out](const auto&... e) {
        auto add = [&out](const auto& x) {
          for (const Tensor& t : forward_outputs(x)) out.push_back(t);
        };
        (add(e), ...);
      },
      tuple);
  return out;
}
template <class A, class B>
TensorList forward_outputs(const std::pair<A, B>& pair) {
  return forward_outputs(std::tie(pair.first, pair.second));
}
}  // namespace detail

template <class Impl>
class ModuleHolder {
 public:
  using ContainedType = Impl;
  // Constructs the Impl with no arguments (only when it has a default constructor).
  ModuleHolder()
    requires std::is_default_constructible_v<Impl>
      : impl_(std::make_shared<Impl>()) {
    impl_->set_clone_factory([] { return std::make_shared<Impl>(); });
  }
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
      : impl_(construct(std::forward<First>(first), std::forward<Rest>(rest)...)) {}

  Impl* operator->() const { return checked(); }
  Impl& operator*() const { return *checked(); }
  const std::shared_ptr<Impl>& ptr() const { return impl_; }
  Impl* get() const { return impl_.get(); }
  bool is_empty() const { return impl_ == nullptr; }
  explicit operator bool() const { return impl_ != nullptr; }

  // Indexes a container's Impl: sequential[0], module_list[i], module_dict["key"].
  template <class Arg>
  decltype(auto) operator[](Arg&& arg) const {
    return (*checked())[std::forward<Arg>(arg)];
  }

  // module(x, ...) runs the module's forward pre-hooks, if it has any
  // (Module::register_forward_pre_hook), then module->forward(x, ...), then its forward hooks
  // with the result's tensors (Module::register_forward_hook).
  template <class... Args>
  decltype(auto) operator()(Args&&... args) const {
    Impl* impl = checked();
    using R = decltype(impl->forward(std::forward<Args>(args)...));
    if (impl->has_forward_pre_hooks()) [[unlikely]]
      impl->run_forward_pre_hooks();
    if constexpr (!std::is_void_v<R>) {
      if (impl->has_forward_hooks()) [[unlikely]] {
        R out = impl->forward(std::forward<Args>(args)...);  // a reference when forward returns one
        impl->run_forward_hooks(detail::forward_outputs(out));
        return out;  // decltype(auto) of the name: R, as the call below
      }
    }
    return impl->forward(std::forward<Args>(args)...);
  }

 private:
  // Note [Module clone]: a module made by a holder keeps copies of its constructor arguments,
  // and clone() builds a fresh module from them (same structure, new tensors) before copying
  // the values in (Module::copy_state_from). Arguments that cannot be copied leave no
  // factory, and clone() then says so; containers (Sequential, ModuleList, ModuleDict) clone
  // their children instead. libtorch's Cloneable<T> (nn/cloneable.h) is accepted for ported
  // code and clones the same way, so reset() is never called by clone().
  template <class... Args>
  static std::shared_ptr<Impl> construct(Args&&... args) {
    if constexpr ((std::is_copy_constructible_v<std::decay_t<Args>> && ...) &&
                  std::is_constructible_v<Impl, const std::decay_t<Args>&...>) {
      auto factory = [... a = std::decay_t<Args>(std::forward<Args>(args))] { return std::make_shared<Impl>(a...); };
      std::shared_ptr<Impl> impl = factory();
      impl->set_clone_factory(std::move(factory));
      return impl;
    } else {
      return std::make_shared<Impl>(std::forward<Args>(args)...);
    }
  }

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
