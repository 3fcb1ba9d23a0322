// Tensor: a shared handle to a strided view (sizes, strides, offset, dtype) of a Storage,
// plus the autograd metadata of that view. See Note [Tensor methods] for where methods live.
#pragma once

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
// Tensor lives in core/, but most of its math methods record autograd history, and
// core/ must not include autograd/. So this header declares every method; metadata and
// non-differentiable ones are defined in core/ (tensor.cpp, native/), differentiable ones
// in autograd/tensor_methods.cpp, which forward to the gr:: functions of autograd/ops.h.
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

  // ---- views (autograd/, differentiable) ----
  Tensor view(IntArrayRef shape) const;
  Tensor reshape(IntArrayRef shape) const;
  Tensor permute(IntArrayRef dims) const;
  Tensor transpose(int64_t d0, int64_t d1) const;
  Tensor t() const;  // transpose of a 2-D tensor
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor slice(int64_t dim, int64_t start, int64_t end, int64_t step = 1) const;
  Tensor select(int64_t dim, int64_t index) const;
  Tensor operator[](int64_t index) const { return select(0, index); }
  Tensor expand(IntArrayRef shape) const;
  Tensor expand_as(const Tensor& other) const { return expand(other.sizes()); }
  Tensor squeeze() const;
  Tensor squeeze(int64_t dim) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor contiguous() const;
  Tensor clone() const;
  // Conversions as libtorch's: a new tensor only when the dtype or device changes, or when
  // copy is true. non_blocking: a copy from pinned CPU memory to CUDA returns without
  // waiting for it (Note [Pinned copies]); elsewhere it changes nothing.
  Tensor to(TensorOptions options = {}, bool non_blocking = false, bool copy = false) const;
  Tensor to(Device device, ScalarType dtype, bool non_blocking = false, bool copy = false) const;
  Tensor to(ScalarType dtype, bool non_blocking = false, bool copy = false) const;
  Tensor to(const Tensor& other, bool non_blocking = false, bool copy = false) const;  // other's dtype and device
  Tensor cpu() const { return to(Device(kCPU)); }
  // To the current CUDA device (gr::cuda::set_device), or to cuda:index.
  Tensor cuda() const;
  Tensor cuda(int index) const { return to(Device(kCUDA, index)); }

  // ---- math (autograd/, differentiable) ----
  Tensor add(const Tensor& o, const Scalar& alpha = 1) const;
  Tensor add(const Scalar& o) const;
  Tensor sub(const Tensor& o, const Scalar& alpha = 1) const;
  Tensor sub(const Scalar& o) const;
  Tensor mul(const Tensor& o) const;
  Tensor mul(const Scalar& o) const;
  Tensor div(const Tensor& o) const;
  Tensor div(const Scalar& o) const;
  Tensor neg() const;
  Tensor exp() const;
  Tensor log() const;
  Tensor sqrt() const;
  Tensor abs() const;
  Tensor pow(const Scalar& exponent) const;
  Tensor pow(const Tensor& exponent) const;
  Tensor relu() const;
  Tensor sigmoid() const;
  Tensor tanh() const;
  Tensor matmul(const Tensor& o) const;
  Tensor mm(const Tensor& o) const;
  Tensor log_softmax(int64_t dim) const;
  Tensor softmax(int64_t dim) const;

  // ---- in-place (autograd/; bump the version counter) ----
  // As libtorch's: const methods (they change the shared storage, not the handle) returning
  // Tensor&, so `x.grad().zero_()` and `for (const auto& p : params) p.copy_(q)` compile.
  Tensor& add_(const Tensor& o, const Scalar& alpha = 1) const;
  Tensor& add_(const Scalar& o) const;
  Tensor& sub_(const Tensor& o, const Scalar& alpha = 1) const;
  Tensor& sub_(const Scalar& o) const;
  Tensor& mul_(const Tensor& o) const;
  Tensor& mul_(const Scalar& o) const;
  Tensor& div_(const Tensor& o) const;
  Tensor& div_(const Scalar& o) const;
  Tensor& relu_() const;
  Tensor& zero_() const;
  Tensor& fill_(const Scalar& value) const;
  Tensor& copy_(const Tensor& src, bool non_blocking = false) const;

  // ---- comparisons and indices (core, not differentiable; bool results) ----
  Tensor eq(const Tensor& o) const;
  Tensor eq(const Scalar& o) const;
  Tensor ne(const Tensor& o) const;
  Tensor ne(const Scalar& o) const;
  Tensor gt(const Tensor& o) const;
  Tensor gt(const Scalar& o) const;
  Tensor lt(const Tensor& o) const;
  Tensor lt(const Scalar& o) const;
  Tensor ge(const Tensor& o) const;
  Tensor ge(const Scalar& o) const;
  Tensor le(const Tensor& o) const;
  Tensor le(const Scalar& o) const;
  Tensor argmax() const;
  Tensor argmax(int64_t dim, bool keepdim = false) const;
  bool equal(const Tensor& o) const;                // same shape and exactly the same values
  bool allclose(const Tensor& o, double rtol = 1e-5, double atol = 1e-8) const;

  // Note [Tensor method sections]: the sections below are filled by the op families of
  // autograd/ops.h (one section each). In-place methods follow libtorch's TensorBody.h:
  // const methods (they change the shared storage) returning Tensor& (`Tensor& sin_() const;`,
  // defined as `return const_cast<Tensor&>(*this);` after the work).

  // ---- element-wise math and comparisons (breadth) ----
  // Unary math, out of place and in place (autograd/functions/trig.cpp, special.cpp, rounding.cpp).
  Tensor sin() const;
  Tensor cos() const;
  Tensor tan() const;
  Tensor asin() const;
  Tensor acos() const;
  Tensor atan() const;
  Tensor sinh() const;
  Tensor cosh() const;
  Tensor erf() const;
  Tensor erfc() const;
  Tensor erfinv() const;
  Tensor rsqrt() const;
  Tensor reciprocal() const;
  Tensor log1p() const;
  Tensor expm1() const;
  Tensor log2() const;
  Tensor log10() const;
  Tensor square() const;
  Tensor sign() const;
  Tensor floor() const;
  Tensor ceil() const;
  Tensor round() const;
  Tensor round(int64_t decimals) const;
  Tensor trunc() const;
  Tensor frac() const;
  Tensor& sin_() const;
  Tensor& cos_() const;
  Tensor& tan_() const;
  Tensor& asin_() const;
  Tensor& acos_() const;
  Tensor& atan_() const;
  Tensor& sinh_() const;
  Tensor& cosh_() const;
  Tensor& erf_() const;
  Tensor& erfc_() const;
  Tensor& erfinv_() const;
  Tensor& rsqrt_() const;
  Tensor& reciprocal_() const;
  Tensor& log1p_() const;
  Tensor& expm1_() const;
  Tensor& log2_() const;
  Tensor& log10_() const;
  Tensor& square_() const;
  Tensor& sign_() const;
  Tensor& floor_() const;
  Tensor& ceil_() const;
  Tensor& round_() const;
  Tensor& round_(int64_t decimals) const;
  Tensor& trunc_() const;
  Tensor& frac_() const;
  Tensor& neg_() const;
  Tensor& abs_() const;
  Tensor& exp_() const;
  Tensor& log_() const;
  Tensor& sqrt_() const;
  Tensor& sigmoid_() const;
  Tensor& tanh_() const;
  // Binary math (binary_math.cpp, rounding.cpp, clamp.cpp).
  Tensor atan2(const Tensor& other) const;
  Tensor hypot(const Tensor& other) const;
  Tensor fmod(const Tensor& other) const;
  Tensor fmod(const Scalar& other) const;
  Tensor remainder(const Tensor& other) const;
  Tensor remainder(const Scalar& other) const;
  Tensor lerp(const Tensor& end, const Scalar& weight) const;
  Tensor lerp(const Tensor& end, const Tensor& weight) const;
  Tensor clamp(const std::optional<Scalar>& min, const std::optional<Scalar>& max = std::nullopt) const;
  Tensor clamp(const std::optional<Tensor>& min = {}, const std::optional<Tensor>& max = {}) const;
  Tensor clamp_min(const Scalar& min) const;
  Tensor clamp_min(const Tensor& min) const;
  Tensor clamp_max(const Scalar& max) const;
  Tensor clamp_max(const Tensor& max) const;
  Tensor clip(const std::optional<Scalar>& min, const std::optional<Scalar>& max = std::nullopt) const;
  Tensor clip(const std::optional<Tensor>& min = {}, const std::optional<Tensor>& max = {}) const;
  Tensor& atan2_(const Tensor& other) const;
  Tensor& hypot_(const Tensor& other) const;
  Tensor& fmod_(const Tensor& other) const;
  Tensor& fmod_(const Scalar& other) const;
  Tensor& remainder_(const Tensor& other) const;
  Tensor& remainder_(const Scalar& other) const;
  Tensor& lerp_(const Tensor& end, const Scalar& weight) const;
  Tensor& lerp_(const Tensor& end, const Tensor& weight) const;
  Tensor& clamp_(const std::optional<Scalar>& min, const std::optional<Scalar>& max = std::nullopt) const;
  Tensor& clamp_(const std::optional<Tensor>& min = {}, const std::optional<Tensor>& max = {}) const;
  Tensor& clamp_min_(const Scalar& min) const;
  Tensor& clamp_min_(const Tensor& min) const;
  Tensor& clamp_max_(const Scalar& max) const;
  Tensor& clamp_max_(const Tensor& max) const;
  Tensor& clip_(const std::optional<Scalar>& min, const std::optional<Scalar>& max = std::nullopt) const;
  Tensor& clip_(const std::optional<Tensor>& min = {}, const std::optional<Tensor>& max = {}) const;
  // Logical (bool results), bitwise (bool and integer tensors) and classification
  // (comparisons.cpp; not differentiable).
  Tensor logical_and(const Tensor& other) const;
  Tensor logical_or(const Tensor& other) const;
  Tensor logical_xor(const Tensor& other) const;
  Tensor logical_not() const;
  Tensor& logical_and_(const Tensor& other) const;  // 0 or 1 in self's dtype
  Tensor& logical_or_(const Tensor& other) const;
  Tensor& logical_xor_(const Tensor& other) const;
  Tensor& logical_not_() const;
  Tensor bitwise_and(const Tensor& other) const;
  Tensor bitwise_and(const Scalar& other) const;
  Tensor bitwise_or(const Tensor& other) const;
  Tensor bitwise_or(const Scalar& other) const;
  Tensor bitwise_xor(const Tensor& other) const;
  Tensor bitwise_xor(const Scalar& other) const;
  Tensor bitwise_not() const;
  Tensor& bitwise_and_(const Tensor& other) const;
  Tensor& bitwise_and_(const Scalar& other) const;
  Tensor& bitwise_or_(const Tensor& other) const;
  Tensor& bitwise_or_(const Scalar& other) const;
  Tensor& bitwise_xor_(const Tensor& other) const;
  Tensor& bitwise_xor_(const Scalar& other) const;
  Tensor& bitwise_not_() const;
  Tensor isnan() const;
  Tensor isinf() const;
  Tensor isfinite() const;
  Tensor isclose(const Tensor& other, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false) const;

  // ---- reductions and linear algebra (breadth) ----
  // As the gr:: functions of autograd/ops.h (same overloads and defaults).
  Tensor sum(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor sum(OptionalIntArrayRef dim, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor mean(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor mean(OptionalIntArrayRef dim, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor prod(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor prod(int64_t dim, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt) const;
  template <std::same_as<bool> B>  // exactly bool, as gr::var(x, unbiased)
  Tensor var(B unbiased) const {
    return var(std::nullopt, static_cast<bool>(unbiased));
  }
  Tensor var(OptionalIntArrayRef dim, bool unbiased, bool keepdim = false) const;
  Tensor var(OptionalIntArrayRef dim = std::nullopt, const std::optional<Scalar>& correction = std::nullopt,
             bool keepdim = false) const;
  template <std::same_as<bool> B>  // exactly bool, as gr::std(x, unbiased)
  Tensor std(B unbiased) const {
    return std(std::nullopt, static_cast<bool>(unbiased));
  }
  Tensor std(OptionalIntArrayRef dim, bool unbiased, bool keepdim = false) const;
  Tensor std(OptionalIntArrayRef dim = std::nullopt, const std::optional<Scalar>& correction = std::nullopt,
             bool keepdim = false) const;
  Tensor norm(const Scalar& p = 2) const;
  Tensor norm(const std::optional<Scalar>& p, ScalarType dtype) const;
  Tensor norm(const std::optional<Scalar>& p, IntArrayRef dim, bool keepdim = false) const;
  Tensor norm(const std::optional<Scalar>& p, IntArrayRef dim, bool keepdim, ScalarType dtype) const;
  Tensor logsumexp(IntArrayRef dim, bool keepdim = false) const;
  Tensor cumsum(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor cumprod(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor max() const;
  std::tuple<Tensor, Tensor> max(int64_t dim, bool keepdim = false) const;  // values, indices
  Tensor min() const;
  std::tuple<Tensor, Tensor> min(int64_t dim, bool keepdim = false) const;
  Tensor amax(IntArrayRef dim = {}, bool keepdim = false) const;
  Tensor amin(IntArrayRef dim = {}, bool keepdim = false) const;
  Tensor argmin(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor median() const;
  std::tuple<Tensor, Tensor> median(int64_t dim, bool keepdim = false) const;
  Tensor nanmedian() const;
  std::tuple<Tensor, Tensor> nanmedian(int64_t dim, bool keepdim = false) const;
  Tensor any() const;
  Tensor any(int64_t dim, bool keepdim = false) const;
  Tensor all() const;
  Tensor all(int64_t dim, bool keepdim = false) const;
  Tensor count_nonzero(IntArrayRef dim) const;
  Tensor count_nonzero(std::optional<int64_t> dim = std::nullopt) const;
  Tensor addmm(const Tensor& mat1, const Tensor& mat2, const Scalar& beta = 1, const Scalar& alpha = 1) const;
  Tensor addbmm(const Tensor& batch1, const Tensor& batch2, const Scalar& beta = 1, const Scalar& alpha = 1) const;
  Tensor baddbmm(const Tensor& batch1, const Tensor& batch2, const Scalar& beta = 1, const Scalar& alpha = 1) const;
  Tensor dot(const Tensor& o) const;
  Tensor mv(const Tensor& vec) const;
  Tensor outer(const Tensor& vec2) const;
  Tensor ger(const Tensor& vec2) const;

  // ---- shape and indexing (breadth) ----
  // Views (share storage, as libtorch's do) and splits into views.
  Tensor view_as(const Tensor& other) const;
  Tensor reshape_as(const Tensor& other) const;
  Tensor broadcast_to(IntArrayRef size) const;
  Tensor squeeze(IntArrayRef dims) const;
  Tensor unflatten(int64_t dim, IntArrayRef sizes) const;
  Tensor movedim(IntArrayRef source, IntArrayRef destination) const;
  Tensor movedim(int64_t source, int64_t destination) const;
  Tensor moveaxis(IntArrayRef source, IntArrayRef destination) const;
  Tensor moveaxis(int64_t source, int64_t destination) const;
  Tensor diagonal(int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1) const;
  std::vector<Tensor> chunk(int64_t chunks, int64_t dim = 0) const;
  std::vector<Tensor> split(int64_t split_size, int64_t dim = 0) const;
  std::vector<Tensor> split(IntArrayRef split_sizes, int64_t dim = 0) const;
  std::vector<Tensor> split_with_sizes(IntArrayRef split_sizes, int64_t dim = 0) const;
  std::vector<Tensor> tensor_split(int64_t sections, int64_t dim = 0) const;
  std::vector<Tensor> tensor_split(IntArrayRef indices, int64_t dim = 0) const;
  std::vector<Tensor> unbind(int64_t dim = 0) const;
  // Copies in another arrangement.
  Tensor repeat(IntArrayRef repeats) const;
  Tensor repeat_interleave(const Tensor& repeats, std::optional<int64_t> dim = std::nullopt,
                           std::optional<int64_t> output_size = std::nullopt) const;
  Tensor repeat_interleave(int64_t repeats, std::optional<int64_t> dim = std::nullopt,
                           std::optional<int64_t> output_size = std::nullopt) const;
  Tensor flip(IntArrayRef dims) const;
  Tensor roll(IntArrayRef shifts, IntArrayRef dims = {}) const;
  Tensor tril(int64_t diagonal = 0) const;
  Tensor triu(int64_t diagonal = 0) const;
  Tensor& tril_(int64_t diagonal = 0) const;
  Tensor& triu_(int64_t diagonal = 0) const;
  Tensor diag(int64_t diagonal = 0) const;
  Tensor narrow_copy(int64_t dim, int64_t start, int64_t length) const;
  // Indexing along a dim, masks, selection and sorting.
  Tensor index_select(int64_t dim, const Tensor& index) const;
  Tensor gather(int64_t dim, const Tensor& index, bool sparse_grad = false) const;
  Tensor scatter(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor scatter(int64_t dim, const Tensor& index, const Scalar& value) const;
  Tensor scatter(int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce) const;
  Tensor scatter(int64_t dim, const Tensor& index, const Scalar& value, std::string_view reduce) const;
  Tensor& scatter_(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor& scatter_(int64_t dim, const Tensor& index, const Scalar& value) const;
  Tensor& scatter_(int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce) const;
  Tensor& scatter_(int64_t dim, const Tensor& index, const Scalar& value, std::string_view reduce) const;
  Tensor scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor& scatter_add_(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor index_add(int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha = 1) const;
  Tensor& index_add_(int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha = 1) const;
  Tensor index_copy(int64_t dim, const Tensor& index, const Tensor& source) const;
  Tensor& index_copy_(int64_t dim, const Tensor& index, const Tensor& source) const;
  Tensor index_fill(int64_t dim, const Tensor& index, const Scalar& value) const;
  Tensor index_fill(int64_t dim, const Tensor& index, const Tensor& value) const;
  Tensor& index_fill_(int64_t dim, const Tensor& index, const Scalar& value) const;
  Tensor& index_fill_(int64_t dim, const Tensor& index, const Tensor& value) const;
  Tensor masked_fill(const Tensor& mask, const Scalar& value) const;
  Tensor masked_fill(const Tensor& mask, const Tensor& value) const;
  Tensor& masked_fill_(const Tensor& mask, const Scalar& value) const;
  Tensor& masked_fill_(const Tensor& mask, const Tensor& value) const;
  Tensor masked_select(const Tensor& mask) const;
  Tensor masked_scatter(const Tensor& mask, const Tensor& source) const;
  Tensor& masked_scatter_(const Tensor& mask, const Tensor& source) const;
  Tensor where(const Tensor& condition, const Tensor& other) const;  // condition ? *this : other
  Tensor where(const Tensor& condition, const Scalar& other) const;
  Tensor nonzero() const;
  Tensor argwhere() const;
  std::tuple<Tensor, Tensor> sort(int64_t dim = -1, bool descending = false) const;  // values, indices
  std::tuple<Tensor, Tensor> sort(std::optional<bool> stable, int64_t dim = -1, bool descending = false) const;
  Tensor argsort(int64_t dim = -1, bool descending = false) const;
  Tensor argsort(bool stable, int64_t dim = -1, bool descending = false) const;
  std::tuple<Tensor, Tensor> topk(int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true) const;
  // Python-style indexing with gr::indexing::TensorIndex (core/tensor_indexing.h), as libtorch:
  // x.index({Slice(None, 2), "...", mask}); basic indices make views, tensors index (NumPy rules).
  Tensor index(std::initializer_list<indexing::TensorIndex> indices) const;
  Tensor index(const std::vector<indexing::TensorIndex>& indices) const;
  Tensor index(const std::vector<std::optional<Tensor>>& indices) const;  // one entry per dim (nullopt: all)
  Tensor& index_put_(std::initializer_list<indexing::TensorIndex> indices, const Tensor& rhs) const;
  Tensor& index_put_(std::initializer_list<indexing::TensorIndex> indices, const Scalar& v) const;
  Tensor& index_put_(const std::vector<indexing::TensorIndex>& indices, const Tensor& rhs) const;
  Tensor& index_put_(const std::vector<indexing::TensorIndex>& indices, const Scalar& v) const;
  Tensor& index_put_(const std::vector<std::optional<Tensor>>& indices, const Tensor& values,
                     bool accumulate = false) const;
  Tensor index_put(const std::vector<std::optional<Tensor>>& indices, const Tensor& values,
                   bool accumulate = false) const;

  // ---- creation, conversion, random and dtypes (breadth) ----
  size_t itemsize() const { return element_size(); }
  // This tensor converted to other's dtype and device (libtorch's type_as).
  Tensor type_as(const Tensor& other) const { return to(other.options()); }
  // Element access through chained operator[] on a CPU tensor of dtype T and N dims (checked);
  // the accessor borrows this tensor's sizes and strides, so it must not outlive it.
  template <class T, size_t N> TensorAccessor<T, N> accessor() const&;
  template <class T, size_t N> TensorAccessor<T, N> accessor() && = delete;
  // New tensors with this tensor's dtype and device unless options name others.
  Tensor new_empty(IntArrayRef size, TensorOptions options = {}) const;
  Tensor new_zeros(IntArrayRef size, TensorOptions options = {}) const;
  Tensor new_ones(IntArrayRef size, TensorOptions options = {}) const;
  Tensor new_full(IntArrayRef size, const Scalar& fill_value, TensorOptions options = {}) const;
  // Random fills in place, drawn from `gen` (default: the default generator); see Note
  // [Random streams] in core/native/random.h.
  Tensor& uniform_(double from = 0, double to = 1, Generator* gen = nullptr) const;
  Tensor& normal_(double mean = 0, double std = 1, Generator* gen = nullptr) const;
  Tensor& exponential_(double lambd = 1, Generator* gen = nullptr) const;
  Tensor& log_normal_(double mean = 1, double std = 2, Generator* gen = nullptr) const;
  Tensor& cauchy_(double median = 0, double sigma = 1, Generator* gen = nullptr) const;
  Tensor& geometric_(double p, Generator* gen = nullptr) const;
  // Integers in [from, to), [0, to), or (no bounds) [0, 2^mantissa] for floats and the
  // dtype's range for integers, as torch's random_.
  Tensor& random_(int64_t from, std::optional<int64_t> to, Generator* gen = nullptr) const;
  Tensor& random_(int64_t to, Generator* gen = nullptr) const;
  Tensor& random_(Generator* gen = nullptr) const;
  // 1 with probability p (per element for a tensor p), else 0.
  Tensor& bernoulli_(double p = 0.5, Generator* gen = nullptr) const;
  Tensor& bernoulli_(const Tensor& p, Generator* gen = nullptr) const;
  Tensor bernoulli(Generator* gen = nullptr) const;  // this tensor holds the probabilities
  Tensor bernoulli(double p, Generator* gen = nullptr) const;
  // Indices drawn from the (unnormalised) weights of each row of a 1-D or 2-D tensor.
  Tensor multinomial(int64_t num_samples, bool replacement = false, Generator* gen = nullptr) const;

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
