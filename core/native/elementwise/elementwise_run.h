// The driver every element-wise native op shares: device checks, broadcasting, the dtype a
// kernel computes in, output allocation and the in-place rules. Used by elementwise.cpp and
// elementwise_math.cpp; the kernels themselves are dispatch stubs (ElementwiseFn and kin).
#pragma once

#include <type_traits>
#include <utility>

#include "core/native/elementwise/elementwise.h"

namespace gr::native {

// The dtype a kernel runs in for a given operand dtype: float32 for bfloat16/float16 (see
// Note [Reduced float math] in core/dtype.h), the dtype itself otherwise.
ScalarType math_dtype(ScalarType t);
ScalarType floating_or_float32(ScalarType t);  // integer and bool inputs of float ops
void check_same_device(const Tensor& a, const Tensor& b, const char* op);
// The dtype of an op between a tensor and a number: torch's result_type with a wrapped number
// (a float number makes integer and bool tensors float32, an integer one makes bool int64).
ScalarType result_type(ScalarType t, const Scalar& s);
inline ScalarType result_type(const Tensor& t, const Scalar& s) { return result_type(t.scalar_type(), s); }
// In-place ops write their result into self's dtype: fails as torch does when it can't
// (gr::can_cast).
void check_inplace_result(const char* op, const Tensor& self, ScalarType result);

// A non-owning reference to the kernel call of one op: loop and compute dtype in.
class LoopKernel {
 public:
  template <class F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, LoopKernel>)
  LoopKernel(const F& f)  // NOLINT: implicit, like std::function_ref
      : obj_(&f), call_([](const void* o, const StridedLoop& L, ScalarType t) { (*static_cast<const F*>(o))(L, t); }) {}
  void operator()(const StridedLoop& L, ScalarType t) const { call_(obj_, L, t); }

 private:
  const void* obj_;
  void (*call_)(const void*, const StridedLoop&, ScalarType);
};

// out = f(a) in `compute` (math_dtype'd), returned in out_dtype (bool for predicates; out_dtype
// == compute otherwise).
Tensor run_unary_loop(const LoopKernel& kernel, const Tensor& a, ScalarType compute, ScalarType out_dtype);
// out = f(a, b) broadcast; operands converted to `compute`, result of dtype out_dtype (bool
// for comparisons; out_dtype == compute otherwise).
Tensor run_binary_loop(const LoopKernel& kernel, const char* op, const Tensor& a, const Tensor& b, ScalarType compute,
                       ScalarType out_dtype);
Tensor run_ternary_loop(const LoopKernel& kernel, const char* op, const Tensor& a, const Tensor& b, const Tensor& c,
                        ScalarType compute, ScalarType out_dtype);
// self = f(self), the op's out-of-place result dtype being `result`.
void run_unary_inplace_loop(const LoopKernel& kernel, const char* op, const Tensor& self, ScalarType result);
// self = f(self, other) (other broadcasts to self's shape), computed in self's dtype.
void run_binary_inplace_loop(const LoopKernel& kernel, const char* op, const Tensor& self, const Tensor& other,
                             ScalarType result);
// self = f(self, b, c).
void run_ternary_inplace_loop(const LoopKernel& kernel, const char* op, const Tensor& self, const Tensor& b,
                              const Tensor& c, ScalarType result);

// The same through a dispatch stub on the first tensor's device; `params` are the kernel's
// scalar arguments (an ElementwiseFn without any gets 0).
template <class Fn, class... P>
auto stub_kernel(const DispatchStub<Fn>& stub, Device device, const P&... params) {
  return [&stub, device, &params...](const StridedLoop& L, ScalarType t) {
    if constexpr (sizeof...(P) == 0) stub(device, L, t, Scalar(0));
    else stub(device, L, t, params...);
  };
}
template <class Fn, class... P>
Tensor run_unary(const DispatchStub<Fn>& stub, const Tensor& a, ScalarType compute, const P&... params) {
  return run_unary_loop(stub_kernel(stub, a.device(), params...), a, compute, compute);
}
template <class Fn, class... P>
Tensor run_binary(const DispatchStub<Fn>& stub, const char* op, const Tensor& a, const Tensor& b, ScalarType compute,
                  ScalarType out_dtype, const P&... params) {
  return run_binary_loop(stub_kernel(stub, a.device(), params...), op, a, b, compute, out_dtype);
}
template <class Fn, class... P>
Tensor run_ternary(const DispatchStub<Fn>& stub, const char* op, const Tensor& a, const Tensor& b, const Tensor& c,
                   ScalarType compute, ScalarType out_dtype, const P&... params) {
  return run_ternary_loop(stub_kernel(stub, a.device(), params...), op, a, b, c, compute, out_dtype);
}
template <class Fn, class... P>
void run_unary_inplace(const DispatchStub<Fn>& stub, const char* op, const Tensor& self, ScalarType result,
                       const P&... params) {
  run_unary_inplace_loop(stub_kernel(stub, self.device(), params...), op, self, result);
}
// `result` defaults to the promoted dtype of the operands (arithmetic's rule).
template <class Fn, class... P>
void run_binary_inplace(const DispatchStub<Fn>& stub, const char* op, const Tensor& self, const Tensor& other,
                        const P&... params) {
  run_binary_inplace_loop(stub_kernel(stub, self.device(), params...), op, self, other,
                          promote_types(self.scalar_type(), other.scalar_type()));
}

}  // namespace gr::native
