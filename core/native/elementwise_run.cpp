// The shared driver of the element-wise native ops (see elementwise_run.h).
#include "core/native/elementwise_run.h"

#include "core/factory.h"
#include "core/native/copy.h"

namespace gr::native {

ScalarType math_dtype(ScalarType t) { return is_reduced_float(t) ? kFloat32 : t; }

ScalarType floating_or_float32(ScalarType t) { return is_floating_point(t) ? t : kFloat32; }

void check_same_device(const Tensor& a, const Tensor& b, const char* op) {
  GR_CHECK(a.defined() && b.defined(), op, ": undefined tensor argument");
  GR_CHECK(a.device() == b.device(), op, ": expected all tensors on the same device, got ", a.device(), " and ",
           b.device());
}

ScalarType result_type(ScalarType t, const Scalar& s) {
  if (!is_floating_point(t) && s.is_floating_point()) return kFloat32;
  if (t == kBool && !s.is_floating_point()) return kInt64;
  return t;
}

void check_inplace_result(const char* op, const Tensor& self, ScalarType result) {
  GR_CHECK(can_cast(result, self.scalar_type()), op, ": result type ", result, " can't be cast to the desired output type ",
           self.scalar_type(), " (self of shape ", self.sizes(), ")");
}

Tensor run_unary_loop(const LoopKernel& kernel, const Tensor& a, ScalarType compute, ScalarType out_dtype) {
  GR_CHECK(a.defined(), "element-wise op: undefined tensor argument");
  const ScalarType math = math_dtype(compute);
  Tensor out = empty(a.sizes(), TensorOptions(out_dtype == compute ? math : out_dtype).device(a.device()));
  Tensor ac = to_dtype(a, math);
  kernel(make_strided_loop({out, ac}, a.sizes()), math);
  return to_dtype(out, out_dtype);
}

Tensor run_binary_loop(const LoopKernel& kernel, const char* op, const Tensor& a, const Tensor& b, ScalarType compute,
                       ScalarType out_dtype) {
  check_same_device(a, b, op);
  std::vector<int64_t> shape = broadcast_shapes(a.sizes(), b.sizes(), op);
  const ScalarType math = math_dtype(compute);
  Tensor out = empty(shape, TensorOptions(out_dtype == compute ? math : out_dtype).device(a.device()));
  Tensor ac = to_dtype(a, math), bc = to_dtype(b, math);
  kernel(make_strided_loop({out, ac, bc}, shape), math);
  return to_dtype(out, out_dtype);
}

Tensor run_ternary_loop(const LoopKernel& kernel, const char* op, const Tensor& a, const Tensor& b, const Tensor& c,
                        ScalarType compute, ScalarType out_dtype) {
  check_same_device(a, b, op);
  check_same_device(a, c, op);
  std::vector<int64_t> shape = broadcast_shapes(broadcast_shapes(a.sizes(), b.sizes(), op), c.sizes(), op);
  const ScalarType math = math_dtype(compute);
  Tensor out = empty(shape, TensorOptions(out_dtype == compute ? math : out_dtype).device(a.device()));
  Tensor ac = to_dtype(a, math), bc = to_dtype(b, math), cc = to_dtype(c, math);
  kernel(make_strided_loop({out, ac, bc, cc}, shape), math);
  return to_dtype(out, out_dtype);
}

namespace {
// An operand read while self is written must not alias self's memory in another layout.
Tensor unaliased(const Tensor& self, const Tensor& o) {
  return o.storage().is_same(self.storage()) && !o.is_same(self) ? clone(o) : o;
}
void check_broadcasts_to_self(const char* op, const Tensor& self, IntArrayRef other) {
  std::vector<int64_t> shape = broadcast_shapes(self.sizes(), other, op);
  GR_CHECK(IntArrayRef(shape) == self.sizes(), op, ": output with shape ", self.sizes(),
           " doesn't match the broadcast shape ", IntArrayRef(shape));
}
}  // namespace

void run_unary_inplace_loop(const LoopKernel& kernel, const char* op, const Tensor& self, ScalarType result) {
  GR_CHECK(self.defined(), op, ": undefined tensor argument");
  check_inplace_result(op, self, result);
  if (is_reduced_float(self.scalar_type()) || result != self.scalar_type()) {
    copy_(self, run_unary_loop(kernel, self, result, result));
    return;
  }
  kernel(make_strided_loop({self, self}, self.sizes()), self.scalar_type());
  self.unsafe_impl()->storage.bump_version();
}

void run_binary_inplace_loop(const LoopKernel& kernel, const char* op, const Tensor& self, const Tensor& other,
                             ScalarType result) {
  check_same_device(self, other, op);
  check_broadcasts_to_self(op, self, other.sizes());
  check_inplace_result(op, self, result);
  if (is_reduced_float(self.scalar_type())) {
    copy_(self, run_binary_loop(kernel, op, self, other, self.scalar_type(), self.scalar_type()));
    return;
  }
  Tensor o = unaliased(self, to_dtype(other, self.scalar_type()));
  kernel(make_strided_loop({self, self, o}, self.sizes()), self.scalar_type());
  self.unsafe_impl()->storage.bump_version();
}

void run_ternary_inplace_loop(const LoopKernel& kernel, const char* op, const Tensor& self, const Tensor& b,
                              const Tensor& c, ScalarType result) {
  check_same_device(self, b, op);
  check_same_device(self, c, op);
  check_broadcasts_to_self(op, self, broadcast_shapes(b.sizes(), c.sizes(), op));
  check_inplace_result(op, self, result);
  if (is_reduced_float(self.scalar_type())) {
    copy_(self, run_ternary_loop(kernel, op, self, b, c, self.scalar_type(), self.scalar_type()));
    return;
  }
  Tensor bc = unaliased(self, to_dtype(b, self.scalar_type())), cc = unaliased(self, to_dtype(c, self.scalar_type()));
  kernel(make_strided_loop({self, self, bc, cc}, self.sizes()), self.scalar_type());
  self.unsafe_impl()->storage.bump_version();
}

}  // namespace gr::native
