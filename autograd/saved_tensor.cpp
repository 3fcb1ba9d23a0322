// SavedTensor: version checks, the rebuilding of saved outputs, and the saved-tensor hooks.
#include "autograd/saved_tensor.h"

#include <vector>

#include "autograd/function.h"
#include "autograd/grad_mode.h"
#include "autograd/node.h"

namespace gr::autograd {

// See Note [Saved-tensor hooks].
struct SavedTensor::Packed {
  std::any value;
  graph::UnpackHook unpack;
  std::shared_ptr<Node> grad_fn;  // a non-output with history: its grad_fn and output number
  uint32_t output_nr = 0;
  std::weak_ptr<TensorImpl> leaf;  // a leaf that requires grad
};

namespace {

struct Hooks {
  graph::PackHook pack;
  graph::UnpackHook unpack;
};
thread_local std::vector<Hooks> t_hooks;  // innermost last

}  // namespace

namespace graph {
SavedTensorsHooks::SavedTensorsHooks(PackHook pack_hook, UnpackHook unpack_hook) {
  GR_CHECK(pack_hook && unpack_hook, "saved_tensors_hooks: both the pack and the unpack hook must be set");
  t_hooks.push_back({std::move(pack_hook), std::move(unpack_hook)});
}
SavedTensorsHooks::~SavedTensorsHooks() { t_hooks.pop_back(); }
}  // namespace graph

SavedTensor::SavedTensor(const Tensor& t, bool is_output, uint32_t output_nr)
    : is_output_(is_output), output_nr_(output_nr) {
  if (!t.defined()) return;
  GR_CHECK(!t.is_inference() || InferenceMode::is_enabled(),
           "Inference tensors cannot be saved for backward. To work around you can make a clone to get a normal "
           "tensor and use it in autograd (got ", t.toString(), " of shape ", t.sizes(), ")");
  if (!t_hooks.empty()) {
    // Copied: a pack hook may save tensors itself (a nested checkpoint's inputs) and so
    // push onto the stack while it runs.
    const Hooks hooks = t_hooks.back();
    auto packed = std::make_shared<Packed>();
    packed->value = hooks.pack(t);
    packed->unpack = hooks.unpack;
    if (!is_output && t.grad_fn()) {
      packed->grad_fn = t.grad_fn();
      packed->output_nr = t.output_nr();
    } else if (!is_output && t.requires_grad()) {
      packed->leaf = t.impl_ptr();
    }
    packed_ = std::move(packed);
    return;
  }
  // See Note [Saved outputs].
  data_ = is_output ? t.detach() : t;
  version_ = t._version();
}

Tensor SavedTensor::unpack() const {
  if (packed_) {
    Tensor data = packed_->unpack(packed_->value);
    GR_CHECK(data.defined(), "saved_tensors_hooks: the unpack hook returned an undefined tensor");
    // The identity the tensor had when it was saved, whatever the hook returned.
    Tensor rebuilt = data.detach();
    std::shared_ptr<Node> grad_fn = packed_->grad_fn;
    uint32_t output_nr = packed_->output_nr;
    if (is_output_ && current_node() != nullptr && GradMode::is_enabled()) {  // as without hooks, below
      grad_fn = current_node()->shared_from_this();
      output_nr = output_nr_;
    }
    if (grad_fn) {
      AutogradMeta& meta = rebuilt.unsafe_impl()->autograd_meta();
      meta.grad_fn = std::move(grad_fn);
      meta.output_nr = output_nr;
      meta.requires_grad = true;
    } else if (auto leaf = packed_->leaf.lock()) {
      AutogradMeta& meta = rebuilt.unsafe_impl()->autograd_meta();
      meta.grad_accumulator = grad_accumulator(Tensor(std::move(leaf)));
      meta.requires_grad = true;
    }
    return rebuilt;
  }
  if (!data_.defined()) return data_;
  uint32_t now = data_._version();
  GR_CHECK(now == version_,
           "one of the variables needed for gradient computation has been modified by an inplace operation: [",
           data_.toString(), "] is at version ", now, "; expected version ", version_,
           " instead. Use clone() before the in-place op, or do it out of place.");
  Node* node = current_node();
  if (!is_output_ || node == nullptr || !GradMode::is_enabled()) return data_;
  Tensor rebuilt = data_.detach();
  AutogradMeta& meta = rebuilt.unsafe_impl()->autograd_meta();
  meta.grad_fn = node->shared_from_this();
  meta.output_nr = output_nr_;
  meta.requires_grad = true;
  return rebuilt;
}

}  // namespace gr::autograd
