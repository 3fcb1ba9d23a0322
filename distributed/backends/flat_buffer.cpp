// FlatBuffer: the layout (element or aligned byte offsets) and the copies in and out.
#include "distributed/backends/flat_buffer.h"

#include <memory>

#include "core/error.h"
#include "core/factory.h"
#include "core/native/copy/copy.h"

namespace gr::distributed {

namespace {

// A view of `flat`'s storage at `byte_offset`, shaped and typed like `like` (no autograd).
Tensor typed_view(const Tensor& flat, const Tensor& like, int64_t byte_offset) {
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = flat.storage();
  impl->sizes = like.sizes().vec();
  impl->strides = contiguous_strides(like.sizes());
  impl->dtype = like.scalar_type();
  impl->offset = byte_offset / static_cast<int64_t>(like.element_size());
  return Tensor(std::move(impl));
}

int64_t align_up(int64_t n, int64_t alignment) { return (n + alignment - 1) / alignment * alignment; }

}  // namespace

FlatBuffer::FlatBuffer(const std::vector<Tensor>& like, bool zero) {
  GR_CHECK(!like.empty(), "FlatBuffer: no tensors to lay out");
  const ScalarType dtype = like[0].scalar_type();
  bool one_dtype = true;
  for (const Tensor& t : like) {
    one_dtype = one_dtype && t.scalar_type() == dtype;
    GR_CHECK(t.device() == like[0].device(), "FlatBuffer: tensors on ", like[0].device(), " and ", t.device());
  }
  std::vector<int64_t> byte_offsets;
  int64_t bytes = 0;
  for (const Tensor& t : like) {
    bytes = align_up(bytes, static_cast<int64_t>(t.element_size()));
    byte_offsets.push_back(bytes);
    bytes += static_cast<int64_t>(t.nbytes());
  }
  const TensorOptions options = TensorOptions(one_dtype ? dtype : kUInt8).device(like[0].device());
  const int64_t n = one_dtype ? bytes / static_cast<int64_t>(like[0].element_size()) : bytes;
  flat_ = zero ? zeros({n}, options) : empty({n}, options);
  for (size_t i = 0; i < like.size(); ++i) views_.push_back(typed_view(flat_, like[i], byte_offsets[i]));
}

FlatBuffer FlatBuffer::of(const std::vector<Tensor>& tensors) {
  FlatBuffer b(tensors);
  b.copy_in(tensors);
  return b;
}

void FlatBuffer::copy_in(const std::vector<Tensor>& tensors) const {
  for (size_t i = 0; i < views_.size(); ++i) native::copy_(views_[i], tensors[i]);
}

void FlatBuffer::copy_out(const std::vector<Tensor>& tensors) const {
  for (size_t i = 0; i < views_.size(); ++i) native::copy_(tensors[i], views_[i]);
}

}  // namespace gr::distributed
