// Tensor metadata, autograd flags and views without history.
#include "core/tensor.h"

#include "core/native/copy/copy.h"

namespace gr {

bool IntArrayRef::operator==(IntArrayRef o) const {
  if (size_ != o.size_) return false;
  for (size_t i = 0; i < size_; ++i)
    if ((*this)[i] != o[i]) return false;
  return true;
}

std::ostream& operator<<(std::ostream& out, IntArrayRef a) {
  out << '[';
  for (size_t i = 0; i < a.size(); ++i) out << (i ? ", " : "") << a[i];
  return out << ']';
}

std::vector<int64_t> contiguous_strides(IntArrayRef sizes) {
  std::vector<int64_t> strides(sizes.size());
  int64_t s = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = s;
    // Every stride must fit in int64 (a 0 dim does not make the others' strides smaller).
    GR_CHECK(!__builtin_mul_overflow(s, std::max<int64_t>(sizes[i], 1), &s), "size ", sizes,
             ": a contiguous layout of these dimensions needs strides beyond 2^63 elements");
  }
  return strides;
}

int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op) {
  int64_t n = std::max<int64_t>(ndim, 1);  // a 0-d tensor accepts dim 0 and -1
  GR_CHECK(dim >= -n && dim < n, op, ": dimension ", dim, " is out of range for a tensor with ", ndim,
           " dimension(s) (expected in [", -n, ", ", n - 1, "])");
  return dim < 0 ? dim + n : dim;
}

void check_floating(const char* op, const Tensor& t, const char* what) {
  GR_CHECK(t.defined(), op, ": ", what, " is undefined");
  GR_CHECK(t.is_floating_point(), op, ": not implemented for dtype ", t.scalar_type(), " (a floating point ", what,
           " is required; ", what, " of shape ", t.sizes(), ")");
}

Tensor make_view(const Tensor& base, std::vector<int64_t> sizes, std::vector<int64_t> strides, int64_t offset) {
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = base.storage();
  impl->sizes = std::move(sizes);
  impl->strides = std::move(strides);
  impl->offset = offset;
  impl->dtype = base.scalar_type();
  impl->is_inference = impl->is_inference || base.unsafe_impl()->is_inference;
  return Tensor(std::move(impl));
}

TensorOptions Tensor::options() const { return TensorOptions().dtype(scalar_type()).device(device()); }

bool Tensor::is_contiguous() const {
  int64_t expected = 1;
  for (int64_t i = dim() - 1; i >= 0; --i) {
    int64_t size = impl_->sizes[i];
    if (size == 1) continue;
    if (impl_->strides[i] != expected) return false;
    expected *= size;
  }
  return true;
}

std::string Tensor::toString() const {
  if (!defined()) return "UndefinedType";
  static const char* names[kNumScalarTypes] = {"Float",    "Double", "Long", "Byte",  "Bool",
                                               "BFloat16", "Half",   "Int",  "Short", "Char"};
  std::string s = is_cuda() ? "CUDA" : "CPU";
  s += names[static_cast<int>(scalar_type())];
  s += "Type{";
  for (int64_t i = 0; i < dim(); ++i) {
    if (i) s += ',';
    s += std::to_string(size(i));
  }
  return s + "}";
}

Scalar Tensor::item() const {
  GR_CHECK(defined(), "item: tensor is undefined");
  GR_CHECK(numel() == 1, "item: a Tensor with ", numel(), " elements cannot be converted to a Scalar");
  Tensor t = is_cpu() ? *this : native::to_device(*this, Device(kCPU));
  return dispatch_all(scalar_type(), "item", [&]<class T>() -> Scalar {
    T v = *t.data_ptr<T>();
    if constexpr (std::is_same_v<T, bool>) return Scalar(v);
    else if constexpr (std::is_integral_v<T>) return Scalar(static_cast<int64_t>(v));
    else return Scalar(static_cast<double>(v));
  });
}

template <class T>
T Tensor::item() const {
  const Scalar v = item();
  v.check_fits(scalar_type_of<T>, "item");
  return v.to<T>();
}
template float Tensor::item<float>() const;
template double Tensor::item<double>() const;
template int64_t Tensor::item<int64_t>() const;
template int32_t Tensor::item<int32_t>() const;
template int16_t Tensor::item<int16_t>() const;
template int8_t Tensor::item<int8_t>() const;
template uint8_t Tensor::item<uint8_t>() const;
template bool Tensor::item<bool>() const;
template BFloat16 Tensor::item<BFloat16>() const;
template Half Tensor::item<Half>() const;

bool Tensor::requires_grad() const { return impl_ && impl_->autograd && impl_->autograd->requires_grad; }

const Tensor& Tensor::set_requires_grad(bool r) const {
  GR_CHECK(defined(), "requires_grad_: tensor is undefined");
  GR_CHECK(!r || is_floating_point(), "requires_grad_: only floating point tensors can require gradients, got ",
           scalar_type());
  GR_CHECK(r || is_leaf(), "requires_grad_(false): you can only change requires_grad of leaf tensors; "
                           "use detach() for a non-leaf");
  GR_CHECK(!r || !impl_->is_inference || detail::inference_mode_enabled(),
           "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed; clone() it first");
  impl_->autograd_meta().requires_grad = r;
  return *this;
}

static const Tensor kUndefinedTensor;
static const std::shared_ptr<autograd::Node> kNoNode;

const Tensor& Tensor::grad() const { return impl_->autograd ? impl_->autograd->grad : kUndefinedTensor; }
Tensor& Tensor::mutable_grad() const { return impl_->autograd_meta().grad; }
const std::shared_ptr<autograd::Node>& Tensor::grad_fn() const {
  return impl_->autograd ? impl_->autograd->grad_fn : kNoNode;
}
bool Tensor::is_leaf() const { return !impl_->autograd || !impl_->autograd->grad_fn; }
uint32_t Tensor::output_nr() const { return impl_->autograd ? impl_->autograd->output_nr : 0; }
bool Tensor::retains_grad() const { return impl_->autograd && impl_->autograd->retains_grad; }

Tensor Tensor::detach() const { return make_view(*this, impl_->sizes, impl_->strides, impl_->offset); }

Tensor& Tensor::detach_() const {
  GR_CHECK(!impl_->autograd || !impl_->autograd->is_view,
           "detach_: cannot detach a view of a tensor with history in place; use detach()");
  if (impl_->autograd) {
    impl_->autograd->grad_fn.reset();
    impl_->autograd->requires_grad = false;
    impl_->autograd->output_nr = 0;
  }
  return const_cast<Tensor&>(*this);
}

}  // namespace gr
