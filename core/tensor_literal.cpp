// gr::tensor from literals: shape and dtype of nested lists, ragged-list errors, filling.
#include "core/tensor_literal.h"

#include <cstring>
#include <sstream>

#include "core/factory.h"
#include "core/native/copy/copy.h"

namespace gr {
namespace detail {

TensorDataContainer::TensorDataContainer(std::initializer_list<TensorDataContainer> list)
    : kind_(Kind::List), type_(kFloat32), list_(list) {
  if (list.size() == 0) {
    sizes_ = {0};
    return;
  }
  const TensorDataContainer& first = *list.begin();
  type_ = first.type_;
  int64_t i = 0;
  for (const TensorDataContainer& e : list) {
    GR_CHECK(e.sizes_ == first.sizes_, "tensor: ragged nested list: expected every element of a list to have the shape ",
             IntArrayRef(first.sizes_), " of its first element, but element ", i, " has shape ", IntArrayRef(e.sizes_));
    type_ = promote_types(type_, e.type_);
    ++i;
  }
  sizes_.push_back(static_cast<int64_t>(list.size()));
  sizes_.insert(sizes_.end(), first.sizes_.begin(), first.sizes_.end());
}

TensorDataContainer::TensorDataContainer(const std::vector<bool>& values) : kind_(Kind::Vector), type_(kBool) {
  std::vector<uint8_t> bytes(values.begin(), values.end());
  sizes_ = {static_cast<int64_t>(values.size())};
  values_ = vector_tensor(bytes.data(), bytes.size(), kBool);
}

Tensor TensorDataContainer::vector_tensor(const void* data, size_t n, ScalarType type) {
  Tensor t = empty({static_cast<int64_t>(n)}, TensorOptions(type));
  if (n > 0) std::memcpy(t.data_ptr(), data, n * element_size(type));
  return t;
}

// Appends this node's values to out (advancing it), in row-major order, as dtype values.
void TensorDataContainer::write(char*& out, ScalarType dtype, const char* op) const {
  switch (kind_) {
    case Kind::Scalar:
      scalar_.check_fits(dtype, op);
      dispatch_all(dtype, op, [&]<class T>() { *reinterpret_cast<T*>(out) = scalar_.to<T>(); });
      out += element_size(dtype);
      return;
    case Kind::List:
      for (const TensorDataContainer& e : list_) e.write(out, dtype, op);
      return;
    case Kind::Vector: {
      Tensor v = native::to_dtype(values_, dtype);
      std::memcpy(out, v.data_ptr(), v.nbytes());
      out += v.nbytes();
      return;
    }
  }
}

Tensor TensorDataContainer::to_tensor(ScalarType dtype, const char* op) const {
  if (kind_ == Kind::Vector) return native::to_dtype(values_, dtype);
  Tensor t = empty(sizes_, TensorOptions(dtype));
  char* out = static_cast<char*>(t.data_ptr());
  write(out, dtype, op);
  return t;
}

}  // namespace detail

namespace {
// libtorch's compute_desired_dtype: integer literals give int64, floating ones the default
// dtype (float32); the narrower integer types, bool and the reduced floats keep theirs.
ScalarType literal_dtype(ScalarType t) {
  if (t == kInt32 || t == kInt64) return kInt64;
  if (t == kFloat32 || t == kFloat64) return kFloat32;
  return t;
}
}  // namespace

Tensor tensor(detail::TensorDataContainer data, TensorOptions options) {
  const ScalarType dtype = options.has_dtype() ? options.dtype() : literal_dtype(data.scalar_type());
  Tensor t = data.to_tensor(dtype, "tensor");
  if (options.device() != t.device()) t = native::to_device(t, options.device());
  if (options.requires_grad()) t.set_requires_grad(true);
  return t;
}

}  // namespace gr
