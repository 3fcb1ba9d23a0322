// SavedTensor version checks.
#include "autograd/saved_tensor.h"

namespace gr::autograd {

SavedTensor::SavedTensor(const Tensor& t) {
  if (!t.defined()) return;
  data_ = t.detach();
  version_ = t._version();
}

const Tensor& SavedTensor::unpack() const {
  if (data_.defined()) {
    uint32_t now = data_._version();
    GR_CHECK(now == version_,
             "one of the variables needed for gradient computation has been modified by an inplace operation: [",
             data_.toString(), "] is at version ", now, "; expected version ", version_,
             " instead. Use clone() before the in-place op, or do it out of place.");
  }
  return data_;
}

}  // namespace gr::autograd
