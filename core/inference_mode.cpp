// The inference-mode flag and Tensor::is_inference.
#include "core/inference_mode.h"

#include "core/tensor.h"

namespace gr {

namespace detail {
static thread_local bool t_inference_mode = false;
bool inference_mode_enabled() { return t_inference_mode; }
void set_inference_mode_enabled(bool enabled) { t_inference_mode = enabled; }
}  // namespace detail

bool Tensor::is_inference() const { return impl_->is_inference; }

}  // namespace gr
