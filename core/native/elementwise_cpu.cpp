// CPU kernels of the element-wise ops: each instantiates a shared functor over cpu_map.
#include "core/functors.h"
#include "core/native/cpu_loops.h"
#include "core/native/elementwise.h"

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

GR_REGISTER_KERNEL(add_stub, kCPU, &binary_alpha_cpu<F::Add>);
GR_REGISTER_KERNEL(sub_stub, kCPU, &binary_alpha_cpu<F::Sub>);
GR_REGISTER_KERNEL(mul_stub, kCPU, &binary_cpu<F::Mul>);
GR_REGISTER_KERNEL(div_stub, kCPU, &binary_cpu<F::Div>);
GR_REGISTER_KERNEL(pow_stub, kCPU, &binary_cpu<F::Pow>);
GR_REGISTER_KERNEL(maximum_stub, kCPU, &binary_cpu<F::Maximum>);
GR_REGISTER_KERNEL(minimum_stub, kCPU, &binary_cpu<F::Minimum>);
GR_REGISTER_KERNEL(eq_stub, kCPU, &compare_cpu<F::Eq>);
GR_REGISTER_KERNEL(ne_stub, kCPU, &compare_cpu<F::Ne>);
GR_REGISTER_KERNEL(gt_stub, kCPU, &compare_cpu<F::Gt>);
GR_REGISTER_KERNEL(lt_stub, kCPU, &compare_cpu<F::Lt>);
GR_REGISTER_KERNEL(ge_stub, kCPU, &compare_cpu<F::Ge>);
GR_REGISTER_KERNEL(le_stub, kCPU, &compare_cpu<F::Le>);
GR_REGISTER_KERNEL(where_stub, kCPU, &where_cpu);
GR_REGISTER_KERNEL(neg_stub, kCPU, &unary_cpu<F::Neg>);
GR_REGISTER_KERNEL(abs_stub, kCPU, &unary_cpu<F::Abs>);
GR_REGISTER_KERNEL(relu_stub, kCPU, &unary_cpu<F::Relu>);
GR_REGISTER_KERNEL(exp_stub, kCPU, &float_unary_cpu<F::Exp>);
GR_REGISTER_KERNEL(log_stub, kCPU, &float_unary_cpu<F::Log>);
GR_REGISTER_KERNEL(sqrt_stub, kCPU, &float_unary_cpu<F::Sqrt>);
GR_REGISTER_KERNEL(sigmoid_stub, kCPU, &float_unary_cpu<F::Sigmoid>);
GR_REGISTER_KERNEL(tanh_stub, kCPU, &float_unary_cpu<F::Tanh>);
GR_REGISTER_KERNEL(pow_scalar_stub, kCPU, &pow_scalar_cpu);
GR_REGISTER_KERNEL(relu_backward_stub, kCPU, &float_binary_cpu<F::ReluBackward>);
GR_REGISTER_KERNEL(sigmoid_backward_stub, kCPU, &float_binary_cpu<F::SigmoidBackward>);
GR_REGISTER_KERNEL(tanh_backward_stub, kCPU, &float_binary_cpu<F::TanhBackward>);
GR_REGISTER_KERNEL(pow_scalar_backward_stub, kCPU, &float_binary_cpu<F::PowScalarBackward>);
GR_REGISTER_KERNEL(abs_backward_stub, kCPU, &float_binary_cpu<F::AbsBackward>);

}  // namespace gr::native
