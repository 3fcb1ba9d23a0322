// The element-wise reductions of the CPU backends, one typed loop per dtype and op.
#include "distributed/backends/reduce_kernels.h"

#include <cstdint>
#include <type_traits>

#include "core/error.h"
#include "core/half.h"

namespace gr::distributed {

namespace {

template <class T, class F>
ReduceKernel make_kernel(F f) {
  return [f](void* c, const void* a, const void* b, size_t n) {
    T* out = static_cast<T*>(c);
    const T* x = static_cast<const T*>(a);
    const T* y = static_cast<const T*>(b);
    for (size_t i = 0; i < n; ++i) out[i] = T(f(x[i], y[i]));
  };
}

template <class T>
ReduceKernel typed_kernel(ReduceOp op) {
  using V = std::conditional_t<std::is_same_v<T, BFloat16> || std::is_same_v<T, Half>, float, T>;
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Avg: return make_kernel<T>([](V a, V b) { return a + b; });
    case ReduceOp::Product: return make_kernel<T>([](V a, V b) { return a * b; });
    case ReduceOp::Min: return make_kernel<T>([](V a, V b) { return a < b ? a : b; });
    case ReduceOp::Max: return make_kernel<T>([](V a, V b) { return a > b ? a : b; });
  }
  return nullptr;
}

}  // namespace

ReduceKernel reduce_kernel(ReduceOp op, ScalarType t, const char* backend) {
  switch (t) {
    case kFloat32: return typed_kernel<float>(op);
    case kFloat64: return typed_kernel<double>(op);
    case kInt64: return typed_kernel<int64_t>(op);
    case kUInt8: return typed_kernel<uint8_t>(op);
    case kBFloat16: return typed_kernel<BFloat16>(op);
    case kFloat16: return typed_kernel<Half>(op);
    default: GR_ERROR(backend, ": dtype ", t, " cannot be reduced");
  }
}

}  // namespace gr::distributed
