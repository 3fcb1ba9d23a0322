// Deterministic tensor creation (empty, zeros, full, arange, from_blob, tensor, ...).
#include "core/factory.h"

#include <cmath>
#include <cstring>

#include "core/cuda_memory.h"
#include "core/native/copy.h"
#include "core/version.h"
#include "core/native/range.h"

namespace gr {

static void check_sizes(IntArrayRef sizes, const char* op) {
  for (int64_t s : sizes) GR_CHECK(s >= 0, op, ": negative dimension ", s, " in size ", sizes);
}

// A factory result made on the CPU, moved to its device. To a GPU it goes through page-locked
// memory without waiting (Note [Pinned copies]): a copy from pageable memory stops the host
// until the stream is idle (Note [Host synchronisations]), which a model's position ids
// (arange on the GPU) did once per forward.
static Tensor to_target(const Tensor& cpu, Device device) {
  if (!device.is_cuda() || cuda_device_count() == 0 || cpu.numel() == 0) return native::to_device(cpu, device);
  return native::to_device(pin_memory(cpu), device, /*non_blocking=*/true);
}

static Tensor finish(Tensor t, const TensorOptions& options) {
  if (options.requires_grad()) t.set_requires_grad(true);
  return t;
}

Tensor empty(IntArrayRef sizes, TensorOptions options) {
  check_sizes(sizes, "empty");
  auto impl = std::make_shared<TensorImpl>();
  impl->sizes = sizes.vec();
  impl->strides = contiguous_strides(sizes);
  impl->dtype = options.dtype();
  int64_t nbytes = 0;
  GR_CHECK(!__builtin_mul_overflow(impl->numel(), static_cast<int64_t>(element_size(options.dtype())), &nbytes),
           "empty: size ", sizes, " of ", options.dtype(), " needs more than 2^63 bytes");
  impl->storage = Storage::allocate(static_cast<size_t>(nbytes), options.device());
  return finish(Tensor(std::move(impl)), options);
}

Tensor full(IntArrayRef sizes, const Scalar& value, TensorOptions options) {
  value.check_fits(options.dtype(), "full");
  Tensor t = empty(sizes, options.requires_grad(false));
  native::fill_(t, value);
  return finish(t, options);
}
Tensor zeros(IntArrayRef sizes, TensorOptions options) { return full(sizes, 0, options); }
Tensor ones(IntArrayRef sizes, TensorOptions options) { return full(sizes, 1, options); }
Tensor empty_like(const Tensor& t) { return empty(t.sizes(), t.options()); }
Tensor empty_like(const Tensor& t, TensorOptions options) { return empty(t.sizes(), options.merged_over(t.options())); }
Tensor zeros_like(const Tensor& t) { return zeros(t.sizes(), t.options()); }
Tensor zeros_like(const Tensor& t, TensorOptions options) { return zeros(t.sizes(), options.merged_over(t.options())); }
Tensor ones_like(const Tensor& t) { return ones(t.sizes(), t.options()); }
Tensor full_like(const Tensor& t, const Scalar& value) { return full(t.sizes(), value, t.options()); }

Tensor arange(const Scalar& end, TensorOptions options) { return arange(0, end, 1, options); }
Tensor arange(const Scalar& end) { return arange(0, end, 1); }
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step) { return arange(start, end, step, {}); }
Tensor arange(const Scalar& start, const Scalar& end, TensorOptions options) { return arange(start, end, 1, options); }
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step, TensorOptions options) {
  // Without a dtype: int64 when every bound is an integer, else float32 (as torch).
  const bool integral = start.is_integral() && end.is_integral() && step.is_integral();
  if (!options.has_dtype()) options = options.dtype(integral ? kInt64 : kFloat32);
  return finish(to_target(native::arange_cpu(start, end, step, options.dtype()), options.device()), options);
}

Tensor linspace(double start, double end, int64_t steps, TensorOptions options) {
  return finish(to_target(native::linspace_cpu(start, end, steps, options.dtype()), options.device()), options);
}

Tensor eye(int64_t n, TensorOptions options) {
  GR_CHECK(n >= 0, "eye: n must be non-negative, got ", n);
  Tensor cpu = zeros({n, n}, TensorOptions(kFloat64));
  double* p = cpu.data_ptr<double>();
  for (int64_t i = 0; i < n; ++i) p[i * n + i] = 1.0;
  return finish(to_target(native::to_dtype(cpu, options.dtype()), options.device()), options);
}

static Tensor wrap_blob(void* data, IntArrayRef sizes, std::vector<int64_t> strides, std::function<void(void*)> deleter,
                        const TensorOptions& options) {
  check_sizes(sizes, "from_blob");
  GR_CHECK(data != nullptr || sizes.empty() || std::find(sizes.begin(), sizes.end(), 0) != sizes.end(),
           "from_blob: data pointer is null");
  int64_t extent = 1;  // elements reachable through sizes and strides
  for (size_t i = 0; i < sizes.size(); ++i) extent += (sizes[i] - 1) * strides[i];
  auto impl = std::make_shared<TensorImpl>();
  impl->sizes = sizes.vec();
  impl->strides = std::move(strides);
  impl->dtype = options.dtype();
  impl->storage = Storage::wrap(data, static_cast<size_t>(std::max<int64_t>(extent, 0)) * element_size(options.dtype()),
                                options.device(), std::move(deleter));
  return finish(Tensor(std::move(impl)), options);
}

Tensor from_blob(void* data, IntArrayRef sizes, TensorOptions options) {
  return wrap_blob(data, sizes, contiguous_strides(sizes), nullptr, options);
}
Tensor from_blob(void* data, IntArrayRef sizes, std::function<void(void*)> deleter, TensorOptions options) {
  return wrap_blob(data, sizes, contiguous_strides(sizes), std::move(deleter), options);
}
Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, TensorOptions options) {
  GR_CHECK(sizes.size() == strides.size(), "from_blob: ", sizes.size(), " sizes but ", strides.size(), " strides");
  return wrap_blob(data, sizes, strides.vec(), nullptr, options);
}

Tensor scalar_tensor(const Scalar& value, TensorOptions options) { return full({}, value, options); }

}  // namespace gr
