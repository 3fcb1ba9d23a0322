// Tensor's autograd methods (backward, the hooks) and, from the op lists, every spelling
// of an op that forwards to another one (Note [Tensor methods], Note [Op lists]).
#include "autograd/engine.h"
#include "autograd/function.h"
#include "autograd/ops.h"

namespace gr {

void Tensor::backward(const Tensor& gradient, std::optional<bool> retain_graph, bool create_graph,
                      std::optional<TensorList> inputs) const {
  GR_CHECK(!inputs || !inputs->empty(), "backward: 'inputs' argument to backward() cannot be empty");
  autograd::backward({*this}, gradient.defined() ? TensorList{gradient} : TensorList{}, retain_graph, create_graph,
                     inputs.value_or(TensorList{}));
}

size_t Tensor::register_hook(TensorHook hook) const {
  GR_CHECK(requires_grad(), "register_hook: cannot register a hook on a tensor that doesn't require gradient");
  if (grad_fn()) return grad_fn()->add_pre_hook(output_nr(), std::move(hook));
  size_t handle = autograd::next_hook_handle();
  unsafe_impl()->autograd_meta().hooks.emplace_back(handle, std::move(hook));
  return handle;
}

void Tensor::remove_hook(size_t handle) const {
  if (grad_fn() && grad_fn()->remove_pre_hook(handle)) return;
  if (!unsafe_impl()->autograd) return;
  auto remove_from = [handle](auto& list) {
    for (auto it = list.begin(); it != list.end(); ++it)
      if (it->first == handle) {
        list.erase(it);
        return;
      }
  };
  remove_from(unsafe_impl()->autograd->hooks);
  remove_from(unsafe_impl()->autograd->post_accumulate_hooks);
}

size_t Tensor::register_post_accumulate_grad_hook(PostAccumulateGradHook hook) const {
  GR_CHECK(requires_grad() && is_leaf(),
           "register_post_accumulate_grad_hook: only leaf tensors that require grad accept this hook");
  size_t handle = autograd::next_hook_handle();
  unsafe_impl()->autograd_meta().post_accumulate_hooks.emplace_back(handle, std::move(hook));
  return handle;
}

void Tensor::retain_grad() const {
  GR_CHECK(requires_grad(), "retain_grad: can't retain_grad on a tensor that doesn't require grad");
  if (is_leaf() || retains_grad()) return;
  unsafe_impl()->autograd->retains_grad = true;
  // A weak reference: the hook lives on grad_fn, which the tensor itself keeps alive.
  std::weak_ptr<TensorImpl> weak = impl_ptr();
  register_hook([weak](const Tensor& g) {
    if (auto impl = weak.lock()) {
      Tensor& grad = impl->autograd_meta().grad;
      grad = grad.defined() ? gr::add(grad, g) : g.clone();
    }
    return Tensor();
  });
}

namespace {

// Note [In place through a copy]
// libtorch has in-place forms of ops whose kernels only write a new tensor (addmm_, cumsum_,
// eq_, gelu_, ...). gradring spells them (GR_OP_INPLACE_OF in the op lists) as the op's result
// copied into self: the copy is differentiable, so the gradient reaches self's old value
// through the op (grad_fn is CopyBackwards, where torch names the op's node), the version
// counter moves, and the in-place checks of copy_ apply. The op reads a clone of self when
// self requires grad, so that what its backward saved is not the memory the copy overwrites.
// As torch, a result whose dtype can't be cast into self's is refused.
template <class Op>
Tensor& assign_inplace(const char* op, const Tensor& self, const Op& compute) {
  Tensor result = compute(self.requires_grad() ? self.clone() : self);
  GR_CHECK(can_cast(result.scalar_type(), self.scalar_type()), op, ": result type ", result.scalar_type(),
           " can't be cast to the desired output type ", self.scalar_type());
  self.copy_(result);
  return const_cast<Tensor&>(self);
}

}  // namespace

// The spellings that forward to another (Note [Op lists]): a method to its gr:: function
// (GR_OP), a function to its method (GR_OP_BY_METHOD, GR_OP_INPLACE), and the in-place forms
// through a copy (GR_OP_INPLACE_OF). Out of line, as every call into an op is: one call,
// outside any element loop.
#undef GR_D
#define GR_D(...)
#define GR_OP(ret, name, params, args) \
  ret Tensor::name params const { return gr::name GR_WITH_THIS args; }
#define GR_OP_BY_METHOD(ret, name, params, args) \
  ret name GR_WITH_SELF params { return self.name args; }
#define GR_OP_INPLACE(name, params, args) \
  Tensor& name GR_WITH_MUTABLE_SELF params { return self.name args; }
#define GR_OP_INPLACE_OF(name, variants, params, args)                                                      \
  GR_IF_METHOD(variants, Tensor& Tensor::name##_ params const {                                             \
    return assign_inplace(#name "_", *this, [&](const Tensor& in) { return gr::name GR_WITH_FIRST(in, args); }); \
  })                                                                                                        \
  GR_IF_FN(variants, Tensor& name##_ GR_WITH_MUTABLE_SELF params {                                          \
    return assign_inplace(#name "_", self, [&](const Tensor& in) { return gr::name GR_WITH_FIRST(in, args); }); \
  })
#include "core/native/all_ops.def"
#undef GR_OP
#undef GR_OP_BY_METHOD
#undef GR_OP_INPLACE
#undef GR_OP_INPLACE_OF
#undef GR_D
#define GR_D(...) = __VA_ARGS__

}  // namespace gr
