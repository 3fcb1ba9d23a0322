// Tensor: a shared handle to a strided view (sizes, strides, offset, dtype) of a Storage,
// plus the autograd metadata of that view. See Note [Tensor methods] for where methods live.
#pragma once

#include <concepts>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/dtype.h"
#include "core/inference_mode.h"
#include "core/int_array_ref.h"
#include "core/op_list.h"
#include "core/reduction.h"
#include "core/live_objects.h"
#include "core/scalar.h"
#include "core/storage.h"
#include "core/tensor_accessor.h"
#include "core/tensor_options.h"

namespace gr {

namespace autograd {
class Node;
}
class Generator;
namespace indexing {
struct TensorIndex;  // core/tensor_indexing.h
}
class Tensor;
struct TensorImpl;
using TensorList = std::vector<Tensor>;

// A tensor hook sees the gradient flowing into a tensor; returning a defined tensor
// replaces it. A post-accumulate hook runs on a leaf right after its .grad is final.
using TensorHook = std::function<Tensor(const Tensor& grad)>;
using PostAccumulateGradHook = std::function<void(Tensor& leaf)>;

// Note [Tensor methods]
// Tensor lives in core/, but most of its methods are ops that record autograd history, and
// core/ must not include autograd/. So this header declares every method (the ops' from the
// family lists, Note [Op lists] in core/op_list.h); the metadata methods and a few ops without
// history (new_*, cuda(), equal, allclose) are defined in core/, every other op method in
// autograd/: a method that forwards to its gr:: function in autograd/tensor_methods.cpp
// (generated from the lists), a method that is the op itself (views, in-place ops) in the op's
// file under autograd/functions/. gradring::core therefore links only together with
// gradring::autograd (core/CMakeLists.txt says so; every program links gradring::gradring).
class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  // ---- metadata (core) ----
  bool defined() const { return impl_ != nullptr; }
  int64_t dim() const;
  int64_t ndimension() const { return dim(); }
  IntArrayRef sizes() const;
  IntArrayRef strides() const;
  int64_t size(int64_t d) const;
  int64_t stride(int64_t d) const;
  int64_t numel() const;
  ScalarType scalar_type() const;
  ScalarType dtype() const { return scalar_type(); }
  Device device() const;
  bool is_cpu() const { return device().is_cpu(); }
  bool is_cuda() const { return device().is_cuda(); }
  bool is_floating_point() const { return gr::is_floating_point(scalar_type()); }
  TensorOptions options() const;
  int64_t storage_offset() const;
  size_t element_size() const { return gr::element_size(scalar_type()); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * element_size(); }
  bool is_contiguous() const;
  const Storage& storage() const;
  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }
  long use_count() const { return impl_.use_count(); }
  TensorImpl* unsafe_impl() const { return impl_.get(); }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }

  // Pointer to the first element; T must match the dtype exactly.
  template <class T> T* data_ptr() const;
  template <class T> const T* const_data_ptr() const { return data_ptr<T>(); }
  void* data_ptr() const;
  // The value of a one-element tensor.
  template <class T> T item() const;
  Scalar item() const;
  std::string toString() const;  // "CPUFloatType{2,3}"

  // ---- autograd metadata (core) ----
  bool requires_grad() const;
  const Tensor& set_requires_grad(bool r) const;
  const Tensor& requires_grad_(bool r = true) const { return set_requires_grad(r); }
  const Tensor& grad() const;  // undefined tensor when none yet
  Tensor& mutable_grad() const;
  const std::shared_ptr<autograd::Node>& grad_fn() const;
  bool is_leaf() const;
  uint32_t output_nr() const;
  uint32_t _version() const { return storage().version(); }
  Tensor detach() const;  // same data, no history
  Tensor& detach_() const;

  // ---- autograd actions (autograd/) ----
  // As libtorch: retain_graph defaults to create_graph; `inputs` limits which leaves (or
  // non-leaves) get their .grad accumulated. See autograd/engine.h.
  void backward(const Tensor& gradient = {}, std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
                std::optional<TensorList> inputs = std::nullopt) const;
  // Returns a handle usable with remove_hook. Non-leaf hooks see the gradient before it
  // flows on; leaf hooks see it before it is accumulated into .grad.
  size_t register_hook(TensorHook hook) const;
  void remove_hook(size_t handle) const;
  // Leaves only: called after .grad has been accumulated (DDP attaches here).
  size_t register_post_accumulate_grad_hook(PostAccumulateGradHook hook) const;
  void retain_grad() const;
  bool retains_grad() const;

  // ---- the ops (Note [Op lists]): every family's methods, read from the lists ----
  Tensor operator[](int64_t index) const { return select(0, index); }
  Tensor expand_as(const Tensor& other) const { return expand(other.sizes()); }
  Tensor cpu() const { return to(Device(kCPU)); }
  Tensor cuda(int index) const { return to(Device(kCUDA, index)); }
  size_t itemsize() const { return element_size(); }
  // This tensor converted to other's dtype and device (libtorch's type_as).
  Tensor type_as(const Tensor& other) const { return to(other.options()); }
  // var/std(unbiased) take exactly a bool, as gr::var(x, unbiased): a braced {1} reduces dim 1.
  template <std::same_as<bool> B>
  Tensor var(B unbiased) const {
    return var(std::nullopt, static_cast<bool>(unbiased));
  }
  template <std::same_as<bool> B>
  Tensor std(B unbiased) const {
    return std(std::nullopt, static_cast<bool>(unbiased));
  }
#define GR_OP(ret, name, params, args) ret name params const;
#define GR_OP_BY_METHOD(ret, name, params, args) ret name params const;
#define GR_OP_METHOD(ret, name, params) ret name params const;
#define GR_OP_INPLACE(name, params, args) Tensor& name params const;
#define GR_OP_INPLACE_METHOD(name, params) Tensor& name params const;
#define GR_OP_INPLACE_OF(name, variants, params, args) GR_IF_METHOD(variants, Tensor& name##_ params const;)
#include "core/native/all_ops.def"
#undef GR_OP
#undef GR_OP_BY_METHOD
#undef GR_OP_METHOD
#undef GR_OP_INPLACE
#undef GR_OP_INPLACE_METHOD
#undef GR_OP_INPLACE_OF

  // Element access through chained operator[] on a CPU tensor of dtype T and N dims (checked);
  // the accessor borrows this tensor's sizes and strides, so it must not outlive it.
  template <class T, size_t N> TensorAccessor<T, N> accessor() const&;
  template <class T, size_t N> TensorAccessor<T, N> accessor() && = delete;

  // ---- autograd (breadth) ----
  // A hook that returns nothing only observes the gradient (libtorch accepts both forms).
  template <class F>
    requires std::is_void_v<std::invoke_result_t<F&, const Tensor&>>
  size_t register_hook(F&& hook) const {
    return register_hook(TensorHook([h = std::forward<F>(hook)](const Tensor& g) mutable -> Tensor {
      h(g);
      return Tensor();
    }));
  }
  // Made while gr::InferenceMode was on (or a view of such a tensor); see Note [Inference tensors].
  bool is_inference() const;

 private:
  std::shared_ptr<TensorImpl> impl_;
};

// Autograd state of a tensor, created on first use. See Note [Tensor methods].
struct AutogradMeta {
  bool requires_grad = false;
  bool retains_grad = false;
  bool is_view = false;  // a differentiable view of another tensor with history
  uint32_t output_nr = 0;
  Tensor grad;
  std::shared_ptr<autograd::Node> grad_fn;
  std::weak_ptr<autograd::Node> grad_accumulator;  // leaves: the node that fills .grad
  std::vector<std::pair<size_t, TensorHook>> hooks;  // leaves only (non-leaf hooks live on grad_fn)
  std::vector<std::pair<size_t, PostAccumulateGradHook>> post_accumulate_hooks;
};

struct TensorImpl {
  Storage storage;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;  // in elements
  int64_t offset = 0;            // in elements
  ScalarType dtype = kFloat32;
  bool is_inference = detail::inference_mode_enabled();  // see Note [Inference tensors]
  std::unique_ptr<AutogradMeta> autograd;
  detail::LiveCounter<detail::kLiveTensorImpl> live_;  // Note [Live objects]

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t s : sizes) n *= s;
    return n;
  }
  AutogradMeta& autograd_meta() {
    if (!autograd) autograd = std::make_unique<AutogradMeta>();
    return *autograd;
  }
};

// Contiguous (row-major) strides for a shape.
std::vector<int64_t> contiguous_strides(IntArrayRef sizes);
// Wraps a possibly negative dim into [0, ndim); `op` names the caller in the error.
int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op = "dim");
// The check of every op that takes floating point tensors only: "<op>: <what> is undefined", or
// "<op>: not implemented for dtype int64 (a floating point <what> is required; <what> of shape
// [2, 3])", as ATen's "not implemented for 'Long'".
void check_floating(const char* op, const Tensor& t, const char* what = "input");
// A new tensor sharing `base`'s storage with another shape/strides/offset (no autograd).
Tensor make_view(const Tensor& base, std::vector<int64_t> sizes, std::vector<int64_t> strides, int64_t offset);

std::ostream& operator<<(std::ostream& out, const Tensor& t);

// ---- inline accessors ----
inline int64_t Tensor::dim() const { return static_cast<int64_t>(impl_->sizes.size()); }
inline IntArrayRef Tensor::sizes() const { return impl_->sizes; }
inline IntArrayRef Tensor::strides() const { return impl_->strides; }
inline int64_t Tensor::size(int64_t d) const { return impl_->sizes[wrap_dim(d, dim(), "size")]; }
inline int64_t Tensor::stride(int64_t d) const { return impl_->strides[wrap_dim(d, dim(), "stride")]; }
inline int64_t Tensor::numel() const { return impl_->numel(); }
inline ScalarType Tensor::scalar_type() const { return impl_->dtype; }
inline Device Tensor::device() const { return impl_->storage.device(); }
inline int64_t Tensor::storage_offset() const { return impl_->offset; }
inline const Storage& Tensor::storage() const { return impl_->storage; }
inline void* Tensor::data_ptr() const {
  return static_cast<char*>(impl_->storage.data()) + impl_->offset * static_cast<int64_t>(element_size());
}
template <class T>
T* Tensor::data_ptr() const {
  GR_CHECK(defined(), "data_ptr: tensor is undefined");
  GR_CHECK(scalar_type_of<T> == scalar_type(), "data_ptr: tensor has dtype ", scalar_type(),
           " but the requested type is ", scalar_type_of<T>);
  return static_cast<T*>(data_ptr());
}
template <class T, size_t N>
TensorAccessor<T, N> Tensor::accessor() const& {
  static_assert(N > 0, "accessor is used for indexing tensor, for scalars use *data_ptr<T>()");
  GR_CHECK(defined(), "accessor: tensor is undefined");
  GR_CHECK(dim() == static_cast<int64_t>(N), "accessor: TensorAccessor expected ", N, " dims but tensor has ", dim(),
           " (sizes ", sizes(), ")");
  GR_CHECK(is_cpu(), "accessor: the tensor is on ", device(), "; accessors read CPU memory (call .cpu() first)");
  return TensorAccessor<T, N>(data_ptr<std::remove_const_t<T>>(), impl_->sizes.data(), impl_->strides.data());
}

}  // namespace gr
