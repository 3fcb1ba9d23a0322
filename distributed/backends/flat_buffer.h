// FlatBuffer: tensors laid back to back in one flat tensor, so that one collective moves
// them all (DDP's buckets and broadcasts, the CPU backends' all-gather and reduce-scatter),
// as torch's flatten_dense_tensors / unflatten_dense_tensors. The flat tensor has the
// tensors' dtype when they share one, else it holds their bytes (uint8), each tensor's
// place aligned to its element size; views()[i] is shaped and typed like the i-th tensor.
#pragma once

#include <vector>

#include "core/tensor.h"

namespace gr::distributed {

class FlatBuffer {
 public:
  // A buffer laid out for `like` (tensors on one device; only their shapes and dtypes
  // count), uninitialised, or zero-filled with `zero`.
  explicit FlatBuffer(const std::vector<Tensor>& like, bool zero = false);
  // A buffer holding copies of `tensors` (flatten).
  static FlatBuffer of(const std::vector<Tensor>& tensors);

  const Tensor& flat() const { return flat_; }
  const std::vector<Tensor>& views() const { return views_; }
  // views()[i] <- tensors[i] (flatten), and tensors[i] <- views()[i] (unflatten).
  void copy_in(const std::vector<Tensor>& tensors) const;
  void copy_out(const std::vector<Tensor>& tensors) const;

 private:
  Tensor flat_;
  std::vector<Tensor> views_;
};

}  // namespace gr::distributed
