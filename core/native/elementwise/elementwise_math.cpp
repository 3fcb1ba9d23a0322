// The math and comparison families' native ops: each checks its dtypes as PyTorch does, picks
// the dtype it computes in and runs its stub through elementwise_run.h.
#include "core/native/elementwise/elementwise_math.h"

#include <cmath>

#include "core/factory.h"
#include "core/native/copy/copy.h"
#include "core/native/elementwise/elementwise_run.h"
#include "core/native/reduce/reduce.h"

namespace gr::native {

#define GR_MATH_KERNEL(stub, fn_type, kernel) GR_DEFINE_DISPATCH(fn_type, stub##_stub);
#include "core/native/elementwise/math_ops.def"

namespace {

void check_defined(const char* op, const Tensor& a) { GR_CHECK(a.defined(), op, ": undefined tensor argument"); }

// The dtype errors all read "<op>: not implemented for <dtype> (shape ...)", as ATen's
// "not implemented for 'Bool'".
void check_not_bool(const char* op, const Tensor& a) {
  check_defined(op, a);
  GR_CHECK(a.scalar_type() != kBool, op, ": not implemented for dtype bool (input of shape ", a.sizes(), ")");
}

// Integer fmod/remainder by zero fails as Python's ZeroDivisionError does (torch's message).
void check_divisor(const char* op, const Tensor& b, ScalarType compute) {
  if (is_floating_point(compute)) return;
  const bool zero = sum(eq(b, wrapped_scalar(b, 0))).item<int64_t>() != 0;
  GR_CHECK(!zero, op, ": ZeroDivisionError (integer division by zero; divisor of shape ", b.sizes(), " and dtype ",
           b.scalar_type(), ")");
}

// Every bound's dtype joins the result's.
ScalarType clamp_result(const Tensor& a, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  ScalarType t = a.scalar_type();
  if (min) t = result_type(t, *min);
  if (max) t = result_type(t, *max);
  return t;
}
bool is_nan_bound(const std::optional<Scalar>& s) { return s && s->is_floating_point() && std::isnan(s->to_double()); }

void check_lerp(const char* op, const Tensor& start, const Tensor& end, const Tensor* weight) {
  check_defined(op, start);
  check_defined(op, end);
  check_floating(op, start);
  GR_CHECK(end.scalar_type() == start.scalar_type(), op, ": expected dtype ", start.scalar_type(),
           " for `end` but got dtype ", end.scalar_type());
  if (weight) {
    check_defined(op, *weight);
    GR_CHECK(weight->scalar_type() == start.scalar_type(), op, ": expected dtype ", start.scalar_type(),
             " for `weight` but got dtype ", weight->scalar_type());
  }
}

ScalarType bitwise_dtype(const char* op, const Tensor& a, const Tensor& b) {
  check_same_device(a, b, op);
  ScalarType t = promote_types(a.scalar_type(), b.scalar_type());
  GR_CHECK(!is_floating_point(t), op, ": not implemented for dtype ", t, " (bool and integer tensors only; shapes ",
           a.sizes(), " and ", b.sizes(), ")");
  return t;
}

}  // namespace

// ---- the element-wise lines of math_ops.def, by their dtypes ----

namespace {

using Stub = DispatchStub<ElementwiseFn>;

// A unary line's dtypes rule: how the op checks its input and which dtype it computes in.
template <void (*Check)(const char* op, const Tensor&), ScalarType (*Compute)(ScalarType)>
struct UnaryRule {
  static Tensor out_of_place(const Stub& stub, const char* op, const Tensor& a) {
    Check(op, a);
    return run_unary(stub, a, Compute(a.scalar_type()));
  }
  static void in_place(const Stub& stub, const char* op, const Tensor& self) {
    Check(op, self);
    run_unary_inplace(stub, op, self, Compute(self.scalar_type()));
  }
};
void check_floating_input(const char* op, const Tensor& a) { check_floating(op, a); }
ScalarType same_dtype(ScalarType t) { return t; }
ScalarType bool_as_int64(ScalarType t) { return t == kBool ? kInt64 : t; }
using unary_float = UnaryRule<check_defined, floating_or_float32>;   // integer and bool inputs in float32
using unary_floating = UnaryRule<check_floating_input, same_dtype>;  // floating inputs only
using unary_rounding = UnaryRule<check_not_bool, same_dtype>;       // integers unchanged; bool refused
using unary_square = UnaryRule<check_defined, bool_as_int64>;       // bool gives int64
using unary_sign = UnaryRule<check_defined, same_dtype>;            // any dtype, kept

// float: integer inputs compute in float32 (atan2).
Tensor binary_float(const Stub& stub, const char* op, const Tensor& a, const Tensor& b) {
  check_same_device(a, b, op);
  ScalarType t = floating_or_float32(promote_types(a.scalar_type(), b.scalar_type()));
  return run_binary(stub, op, a, b, t, t);
}
void binary_float_(const Stub& stub, const char* op, const Tensor& self, const Tensor& other) {
  check_same_device(self, other, op);
  run_binary_inplace_loop(stub_kernel(stub, self.device()), op, self, other,
                          floating_or_float32(promote_types(self.scalar_type(), other.scalar_type())));
}
// floating: floating inputs only (hypot).
Tensor binary_floating(const Stub& stub, const char* op, const Tensor& a, const Tensor& b) {
  check_same_device(a, b, op);
  ScalarType t = promote_types(a.scalar_type(), b.scalar_type());
  GR_CHECK(is_floating_point(t), op, ": not implemented for dtype ", t, " (floating point inputs are required; shapes ",
           a.sizes(), " and ", b.sizes(), ")");
  return run_binary(stub, op, a, b, t, t);
}
void binary_floating_(const Stub& stub, const char* op, const Tensor& self, const Tensor& other) {
  check_same_device(self, other, op);
  check_floating(op, self);
  run_binary_inplace(stub, op, self, other);
}

}  // namespace

#define GR_UNARY_OP(name, F, dtypes, node, domain)                                                  \
  Tensor name(const Tensor& a) { return unary_##dtypes::out_of_place(name##_stub, #name, a); } \
  void name##_(const Tensor& self) { unary_##dtypes::in_place(name##_stub, #name "_", self); }
#define GR_BINARY_OP(name, F, dtypes, node, domain)                                              \
  Tensor name(const Tensor& a, const Tensor& b) { return binary_##dtypes(name##_stub, #name, a, b); } \
  void name##_(const Tensor& self, const Tensor& other) { binary_##dtypes##_(name##_stub, #name "_", self, other); }
#include "core/native/elementwise/math_ops.def"

Tensor round(const Tensor& a, int64_t decimals) {
  if (decimals == 0) return round(a);
  check_floating("round", a);
  return run_unary(round_decimals_stub, a, a.scalar_type(), Scalar(decimals));
}
void round_(const Tensor& self, int64_t decimals) {
  if (decimals == 0) return round_(self);
  check_floating("round_", self);
  run_unary_inplace(round_decimals_stub, "round_", self, self.scalar_type(), Scalar(decimals));
}

Tensor softplus(const Tensor& a, const Scalar& beta, const Scalar& threshold) {
  check_floating("softplus", a);
  return run_unary(softplus_stub, a, a.scalar_type(), beta, threshold);
}

void neg_(const Tensor& self) {
  check_not_bool("neg_", self);
  run_unary_inplace(neg_stub, "neg_", self, self.scalar_type());
}
void abs_(const Tensor& self) {
  check_not_bool("abs_", self);
  run_unary_inplace(abs_stub, "abs_", self, self.scalar_type());
}
#define GR_DEFINE_FLOAT_INPLACE(name)                                                          \
  void name##_(const Tensor& self) {                                                           \
    check_defined(#name "_", self);                                                            \
    run_unary_inplace(name##_stub, #name "_", self, floating_or_float32(self.scalar_type()));  \
  }
GR_DEFINE_FLOAT_INPLACE(exp)
GR_DEFINE_FLOAT_INPLACE(log)
GR_DEFINE_FLOAT_INPLACE(sqrt)
GR_DEFINE_FLOAT_INPLACE(sigmoid)
GR_DEFINE_FLOAT_INPLACE(tanh)
#undef GR_DEFINE_FLOAT_INPLACE

// ---- binary ----

#define GR_DEFINE_MODULO(name)                                                                           \
  Tensor name(const Tensor& a, const Tensor& b) {                                                        \
    check_same_device(a, b, #name);                                                                      \
    ScalarType t = promote_types(a.scalar_type(), b.scalar_type());                                      \
    GR_CHECK(t != kBool, #name ": not implemented for dtype bool (shapes ", a.sizes(), " and ", b.sizes(), ")"); \
    check_divisor(#name, b, t);                                                                          \
    return run_binary(name##_stub, #name, a, b, t, t);                                                   \
  }                                                                                                      \
  void name##_(const Tensor& self, const Tensor& other) {                                                \
    check_same_device(self, other, #name "_");                                                           \
    check_not_bool(#name "_", self);                                                                     \
    check_divisor(#name "_", other, promote_types(self.scalar_type(), other.scalar_type()));              \
    run_binary_inplace(name##_stub, #name "_", self, other);                                             \
  }
GR_DEFINE_MODULO(fmod)
GR_DEFINE_MODULO(remainder)
#undef GR_DEFINE_MODULO

Tensor lerp(const Tensor& start, const Tensor& end, const Scalar& weight) {
  check_lerp("lerp", start, end, nullptr);
  return run_binary(lerp_scalar_stub, "lerp", start, end, start.scalar_type(), start.scalar_type(), weight);
}
Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight) {
  check_lerp("lerp", start, end, &weight);
  return run_ternary(lerp_stub, "lerp", start, end, weight, start.scalar_type(), start.scalar_type());
}
void lerp_(const Tensor& self, const Tensor& end, const Scalar& weight) {
  check_lerp("lerp_", self, end, nullptr);
  run_binary_inplace(lerp_scalar_stub, "lerp_", self, end, weight);
}
void lerp_(const Tensor& self, const Tensor& end, const Tensor& weight) {
  check_lerp("lerp_", self, end, &weight);
  run_ternary_inplace_loop(stub_kernel(lerp_stub, self.device()), "lerp_", self, end, weight, self.scalar_type());
}

// ---- clamp ----

Tensor clamp(const Tensor& a, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  check_defined("clamp", a);
  GR_CHECK(min || max, "clamp: at least one of 'min' or 'max' must not be None");
  const ScalarType t = clamp_result(a, min, max);
  // torch: with both bounds, a NaN bound makes every element NaN.
  if (min && max && (is_nan_bound(min) || is_nan_bound(max)))
    return full(a.sizes(), NAN, TensorOptions(t).device(a.device()));
  if (min && max) return run_unary(clamp_scalar_stub, a, t, *min, *max);
  if (min) return run_unary(clamp_min_scalar_stub, a, t, *min);
  return run_unary(clamp_max_scalar_stub, a, t, *max);
}
void clamp_(const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  check_defined("clamp_", self);
  GR_CHECK(min || max, "clamp_: at least one of 'min' or 'max' must not be None");
  const ScalarType t = clamp_result(self, min, max);
  if (min && max && (is_nan_bound(min) || is_nan_bound(max))) {
    check_inplace_result("clamp_", self, t);
    fill_(self, NAN);
  } else if (min && max) {
    run_unary_inplace(clamp_scalar_stub, "clamp_", self, t, *min, *max);
  } else if (min) {
    run_unary_inplace(clamp_min_scalar_stub, "clamp_", self, t, *min);
  } else {
    run_unary_inplace(clamp_max_scalar_stub, "clamp_", self, t, *max);
  }
}

// A single tensor bound is maximum/minimum, as in ATen (NaN in either operand gives NaN).
Tensor clamp(const Tensor& a, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  check_defined("clamp", a);
  const bool has_min = min && min->defined(), has_max = max && max->defined();
  GR_CHECK(has_min || has_max, "clamp: at least one of 'min' or 'max' must not be None");
  if (has_min && has_max) {
    ScalarType t = promote_types(promote_types(a.scalar_type(), min->scalar_type()), max->scalar_type());
    return run_ternary(clamp_stub, "clamp", a, *min, *max, t, t);
  }
  return has_min ? maximum(a, *min) : minimum(a, *max);
}
void clamp_(const Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  check_defined("clamp_", self);
  const bool has_min = min && min->defined(), has_max = max && max->defined();
  GR_CHECK(has_min || has_max, "clamp_: at least one of 'min' or 'max' must not be None");
  if (has_min && has_max) {
    ScalarType t = promote_types(promote_types(self.scalar_type(), min->scalar_type()), max->scalar_type());
    run_ternary_inplace_loop(stub_kernel(clamp_stub, self.device()), "clamp_", self, *min, *max, t);
  } else {
    run_binary_inplace(has_min ? maximum_stub : minimum_stub, "clamp_", self, has_min ? *min : *max);
  }
}

// ---- logical, bitwise, classification ----

#define GR_DEFINE_LOGICAL(name)                                                                        \
  Tensor name(const Tensor& a, const Tensor& b) {                                                      \
    check_same_device(a, b, #name);                                                                    \
    return run_binary(name##_stub, #name, a, b, promote_types(a.scalar_type(), b.scalar_type()), kBool); \
  }
GR_DEFINE_LOGICAL(logical_and)
GR_DEFINE_LOGICAL(logical_or)
GR_DEFINE_LOGICAL(logical_xor)
#undef GR_DEFINE_LOGICAL

#define GR_DEFINE_PREDICATE(name)                                                                  \
  Tensor name(const Tensor& a) {                                                                   \
    check_defined(#name, a);                                                                       \
    return run_unary_loop(stub_kernel(name##_stub, a.device()), a, a.scalar_type(), kBool);        \
  }
GR_DEFINE_PREDICATE(logical_not)
GR_DEFINE_PREDICATE(isnan)
GR_DEFINE_PREDICATE(isinf)
GR_DEFINE_PREDICATE(isfinite)
#undef GR_DEFINE_PREDICATE

#define GR_DEFINE_BITWISE(name)                                               \
  Tensor name(const Tensor& a, const Tensor& b) {                             \
    ScalarType t = bitwise_dtype(#name, a, b);                                \
    return run_binary(name##_stub, #name, a, b, t, t);                        \
  }                                                                           \
  void name##_(const Tensor& self, const Tensor& other) {                     \
    bitwise_dtype(#name "_", self, other);                                    \
    run_binary_inplace(name##_stub, #name "_", self, other);                  \
  }
GR_DEFINE_BITWISE(bitwise_and)
GR_DEFINE_BITWISE(bitwise_or)
GR_DEFINE_BITWISE(bitwise_xor)
#undef GR_DEFINE_BITWISE

Tensor bitwise_not(const Tensor& a) {
  check_defined("bitwise_not", a);
  GR_CHECK(!a.is_floating_point(), "bitwise_not: not implemented for dtype ", a.scalar_type(),
           " (bool and integer tensors only; input of shape ", a.sizes(), ")");
  return run_unary(bitwise_not_stub, a, a.scalar_type());
}
void bitwise_not_(const Tensor& self) {
  check_defined("bitwise_not_", self);
  GR_CHECK(!self.is_floating_point(), "bitwise_not_: not implemented for dtype ", self.scalar_type(),
           " (bool and integer tensors only; input of shape ", self.sizes(), ")");
  run_unary_inplace(bitwise_not_stub, "bitwise_not_", self, self.scalar_type());
}

Tensor isclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  check_same_device(a, b, "isclose");
  GR_CHECK(a.scalar_type() == b.scalar_type(), "isclose: ", a.scalar_type(), " did not match ", b.scalar_type(),
           " (shapes ", a.sizes(), " and ", b.sizes(), ")");
  GR_CHECK(rtol >= 0 && atol >= 0, "isclose: rtol (", rtol, ") and atol (", atol, ") must be non-negative");
  return run_binary(isclose_stub, "isclose", a, b, a.scalar_type(), kBool, rtol, atol, equal_nan);
}

}  // namespace gr::native
