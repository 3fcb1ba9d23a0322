// Tensor's differentiable methods (see Note [Tensor methods]): they forward to the gr::
// functions of autograd/ops.h, plus backward() and the hook registrations.
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

Tensor Tensor::add(const Tensor& o, const Scalar& alpha) const { return gr::add(*this, o, alpha); }
Tensor Tensor::add(const Scalar& o) const { return gr::add(*this, o); }
Tensor Tensor::sub(const Tensor& o, const Scalar& alpha) const { return gr::sub(*this, o, alpha); }
Tensor Tensor::sub(const Scalar& o) const { return gr::sub(*this, o); }
Tensor Tensor::mul(const Tensor& o) const { return gr::mul(*this, o); }
Tensor Tensor::mul(const Scalar& o) const { return gr::mul(*this, o); }
Tensor Tensor::div(const Tensor& o) const { return gr::div(*this, o); }
Tensor Tensor::div(const Scalar& o) const { return gr::div(*this, o); }
Tensor Tensor::neg() const { return gr::neg(*this); }
Tensor Tensor::exp() const { return gr::exp(*this); }
Tensor Tensor::log() const { return gr::log(*this); }
Tensor Tensor::sqrt() const { return gr::sqrt(*this); }
Tensor Tensor::abs() const { return gr::abs(*this); }
Tensor Tensor::pow(const Scalar& e) const { return gr::pow(*this, e); }
Tensor Tensor::pow(const Tensor& e) const { return gr::pow(*this, e); }
Tensor Tensor::relu() const { return gr::relu(*this); }
Tensor Tensor::sigmoid() const { return gr::sigmoid(*this); }
Tensor Tensor::tanh() const { return gr::tanh(*this); }
Tensor Tensor::matmul(const Tensor& o) const { return gr::matmul(*this, o); }
Tensor Tensor::mm(const Tensor& o) const { return gr::mm(*this, o); }
Tensor Tensor::log_softmax(int64_t dim) const { return gr::log_softmax(*this, dim); }
Tensor Tensor::softmax(int64_t dim) const { return gr::softmax(*this, dim); }

}  // namespace gr
