// Inference mode's thread-local flag, the core half: a tensor created while it is on is an
// inference tensor (TensorImpl::is_inference), which autograd later refuses to save or to
// update in place. The guard, which also switches grad mode off, is gr::InferenceMode in
// autograd/grad_mode.h. See Note [Inference tensors] there.
#pragma once

namespace gr::detail {

bool inference_mode_enabled();
void set_inference_mode_enabled(bool enabled);

}  // namespace gr::detail
