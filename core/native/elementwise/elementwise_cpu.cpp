// CPU kernels of the element-wise ops: each instantiates a shared functor over cpu_map.
#include "core/functors.h"
#include "core/native/elementwise/cpu_loops.h"
#include "core/native/elementwise/elementwise.h"

namespace gr::native {
namespace {

namespace F = gr::functors;

// Same-dtype binary functor over arithmetic dtypes (float32/64, int64, uint8).
template <template <class> class Op>
void binary_cpu(const StridedLoop& L, ScalarType t, const Scalar&) {
  dispatch_arith(t, "binary op", [&]<class T>() { cpu_map<T, T, T>(L, Op<T>{}); });
}
template <template <class> class Op>
void binary_alpha_cpu(const StridedLoop& L, ScalarType t, const Scalar& alpha) {
  dispatch_arith(t, "add/sub", [&]<class T>() { cpu_map<T, T, T>(L, Op<T>{alpha.to<T>()}); });
}
template <template <class> class Op>
void float_binary_cpu(const StridedLoop& L, ScalarType t, const Scalar& param) {
  dispatch_floating(t, "backward op", [&]<class T>() {
    if constexpr (std::is_constructible_v<Op<T>, T>) cpu_map<T, T, T>(L, Op<T>{param.to<T>()});
    else cpu_map<T, T, T>(L, Op<T>{});
  });
}
template <template <class> class Op>
void compare_cpu(const StridedLoop& L, ScalarType t, const Scalar&) {
  if (t == kBool) return cpu_map<bool, bool, bool>(L, Op<bool>{});
  dispatch_arith(t, "comparison", [&]<class T>() { cpu_map<bool, T, T>(L, Op<T>{}); });
}
template <template <class> class Op>
void unary_cpu(const StridedLoop& L, ScalarType t, const Scalar&) {
  dispatch_arith(t, "unary op", [&]<class T>() { cpu_map<T, T>(L, Op<T>{}); });
}
template <template <class> class Op>
void float_unary_cpu(const StridedLoop& L, ScalarType t, const Scalar&) {
  dispatch_floating(t, "unary op", [&]<class T>() { cpu_map<T, T>(L, Op<T>{}); });
}
void pow_scalar_cpu(const StridedLoop& L, ScalarType t, const Scalar& e) {
  dispatch_arith(t, "pow", [&]<class T>() {
    if constexpr (std::is_floating_point_v<T>) {
      cpu_map<T, T>(L, F::PowScalar<T>{e.to<T>()});
    } else {
      int64_t n = e.to_int64();
      cpu_map<T, T>(L, [n](T a) { return math::ipow(a, n); });
    }
  });
}
void where_cpu(const StridedLoop& L, ScalarType t, const Scalar&) {
  dispatch_all(t, "where", [&]<class T>() { cpu_map<T, bool, T, T>(L, F::Where<T>{}); });
}

}  // namespace

// Every stub of the family's list (core/native/elementwise/elementwise_ops.def) with its `kind` of kernel.
#define GR_CPU_KERNEL_binary(Op) &binary_cpu<F::Op>
#define GR_CPU_KERNEL_binary_alpha(Op) &binary_alpha_cpu<F::Op>
#define GR_CPU_KERNEL_float_binary(Op) &float_binary_cpu<F::Op>
#define GR_CPU_KERNEL_compare(Op) &compare_cpu<F::Op>
#define GR_CPU_KERNEL_where(Op) &where_cpu
#define GR_CPU_KERNEL_unary(Op) &unary_cpu<F::Op>
#define GR_CPU_KERNEL_float_unary(Op) &float_unary_cpu<F::Op>
#define GR_CPU_KERNEL_pow_scalar(Op) &pow_scalar_cpu
#define GR_ELEMENTWISE_KERNEL(stub, kind, Op) GR_REGISTER_KERNEL(stub##_stub, kCPU, GR_CPU_KERNEL_##kind(Op));
#include "core/native/elementwise/elementwise_ops.def"

}  // namespace gr::native
