// SavedTensor: version checks and the rebuilding of saved outputs.
#include "autograd/saved_tensor.h"

#include "autograd/grad_mode.h"
#include "autograd/node.h"

namespace gr::autograd {

SavedTensor::SavedTensor(const Tensor& t, bool is_output, uint32_t output_nr)
    : is_output_(is_output), output_nr_(output_nr) {
  if (!t.defined()) return;
  GR_CHECK(!t.is_inference() || InferenceMode::is_enabled(),
           "Inference tensors cannot be saved for backward. To work around you can make a clone to get a normal "
           "tensor and use it in autograd (got ", t.toString(), " of shape ", t.sizes(), ")");
  // See Note [Saved outputs].
  data_ = is_output ? t.detach() : t;
  version_ = t._version();
}

Tensor SavedTensor::unpack() const {
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
