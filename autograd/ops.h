// The public differentiable ops (gr::add, gr::conv2d, ...), libtorch's names with gr:: for
// torch::, read from the op families' lists (Note [Op lists] in core/op_list.h). Each is
// implemented, forward and backward together, in autograd/functions/.
#pragma once

#include <concepts>
#include <optional>
#include <string_view>
#include <tuple>

#include "core/generator.h"
#include "core/reduction.h"
#include "core/tensor.h"
#include "core/tensor_indexing.h"

namespace gr {

#define GR_OP(ret, name, params, args) ret name GR_WITH_SELF params;
#define GR_OP_BY_METHOD(ret, name, params, args) ret name GR_WITH_SELF params;
#define GR_OP_FN(ret, name, params) ret name params;
#define GR_OP_INPLACE(name, params, args) Tensor& name GR_WITH_MUTABLE_SELF params;
#define GR_OP_INPLACE_OF(name, variants, params, args) GR_IF_FN(variants, Tensor& name##_ GR_WITH_MUTABLE_SELF params;)
#include "core/native/all_ops.def"
#undef GR_OP
#undef GR_OP_BY_METHOD
#undef GR_OP_FN
#undef GR_OP_INPLACE
#undef GR_OP_INPLACE_OF

// The one-argument `unbiased` forms take exactly a bool, so var(x, {1}) and x.var({1}) reduce
// dim 1 (a braced {1} would otherwise convert to bool).
template <std::same_as<bool> B>
Tensor var(const Tensor& x, B unbiased) {
  return var(x, std::nullopt, static_cast<bool>(unbiased));
}
template <std::same_as<bool> B>
Tensor std(const Tensor& x, B unbiased) {
  return std(x, std::nullopt, static_cast<bool>(unbiased));
}
template <std::same_as<bool> B>
std::tuple<Tensor, Tensor> var_mean(const Tensor& x, B unbiased) {
  return var_mean(x, std::nullopt, static_cast<bool>(unbiased));
}
template <std::same_as<bool> B>
std::tuple<Tensor, Tensor> std_mean(const Tensor& x, B unbiased) {
  return std_mean(x, std::nullopt, static_cast<bool>(unbiased));
}
// torch.norm's string form: "fro" (the 2-norm of the elements over dim); "nuc" is refused.
// (A string literal binds to the array overloads exactly: a const char* parameter would also
// take the literal 0, and Scalar's bool constructor takes any pointer.)
Tensor norm(const Tensor& x, std::string_view p, IntArrayRef dim = {}, bool keepdim = false);
template <size_t N>
Tensor norm(const Tensor& x, const char (&p)[N], IntArrayRef dim = {}, bool keepdim = false) {
  return norm(x, std::string_view(p), dim, keepdim);
}

namespace linalg {
// The ord-norm of x's elements over dim (all when nullopt); ord as in norm.
Tensor vector_norm(const Tensor& x, const Scalar& ord = 2, OptionalIntArrayRef dim = std::nullopt,
                   bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt);
// Matrix norms over the two dims `dim`: "fro", or ord = 1, -1 (max/min column sum of |x|),
// inf, -inf (max/min row sum). ord = 2, -2 and "nuc" need an SVD and are refused.
Tensor matrix_norm(const Tensor& x, const Scalar& ord, IntArrayRef dim = {-2, -1}, bool keepdim = false,
                   std::optional<ScalarType> dtype = std::nullopt);
Tensor matrix_norm(const Tensor& x, std::string_view ord = "fro", IntArrayRef dim = {-2, -1}, bool keepdim = false,
                   std::optional<ScalarType> dtype = std::nullopt);
template <size_t N>
Tensor matrix_norm(const Tensor& x, const char (&ord)[N], IntArrayRef dim = {-2, -1}, bool keepdim = false,
                   std::optional<ScalarType> dtype = std::nullopt) {
  return matrix_norm(x, std::string_view(ord), dim, keepdim, dtype);
}
// torch.linalg.norm: vector_norm over one dim (ord nullopt: 2 over all of x), matrix_norm over
// two (or of a 2-D x with an ord).
Tensor norm(const Tensor& x, const std::optional<Scalar>& ord = std::nullopt, OptionalIntArrayRef dim = std::nullopt,
            bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt);
Tensor norm(const Tensor& x, std::string_view ord, OptionalIntArrayRef dim = std::nullopt, bool keepdim = false,
            std::optional<ScalarType> dtype = std::nullopt);
template <size_t N>
Tensor norm(const Tensor& x, const char (&ord)[N], OptionalIntArrayRef dim = std::nullopt, bool keepdim = false,
            std::optional<ScalarType> dtype = std::nullopt) {
  return norm(x, std::string_view(ord), dim, keepdim, dtype);
}
}  // namespace linalg

// Comparison, logical and bitwise operators, as libtorch's (tensor or number on either side).
#define GR_TENSOR_OPERATOR(op, fn, reversed)                                                   \
  inline Tensor operator op(const Tensor& a, const Tensor& b) { return fn(a, b); }           \
  inline Tensor operator op(const Tensor& a, const Scalar& b) { return fn(a, b); }           \
  inline Tensor operator op(const Scalar& a, const Tensor& b) { return reversed(b, a); }
GR_TENSOR_OPERATOR(<, lt, gt)
GR_TENSOR_OPERATOR(<=, le, ge)
GR_TENSOR_OPERATOR(>, gt, lt)
GR_TENSOR_OPERATOR(>=, ge, le)
GR_TENSOR_OPERATOR(==, eq, eq)
GR_TENSOR_OPERATOR(!=, ne, ne)
GR_TENSOR_OPERATOR(&, bitwise_and, bitwise_and)
GR_TENSOR_OPERATOR(|, bitwise_or, bitwise_or)
GR_TENSOR_OPERATOR(^, bitwise_xor, bitwise_xor)
#undef GR_TENSOR_OPERATOR
inline Tensor operator~(const Tensor& a) { return bitwise_not(a); }
inline Tensor& operator&=(Tensor& a, const Tensor& b) { return a.bitwise_and_(b); }
inline Tensor& operator&=(Tensor& a, const Scalar& b) { return a.bitwise_and_(b); }
inline Tensor& operator|=(Tensor& a, const Tensor& b) { return a.bitwise_or_(b); }
inline Tensor& operator|=(Tensor& a, const Scalar& b) { return a.bitwise_or_(b); }
inline Tensor& operator^=(Tensor& a, const Tensor& b) { return a.bitwise_xor_(b); }
inline Tensor& operator^=(Tensor& a, const Scalar& b) { return a.bitwise_xor_(b); }

// ---- operators ----
inline Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
inline Tensor operator+(const Tensor& a, const Scalar& b) { return add(a, b); }
inline Tensor operator+(const Scalar& a, const Tensor& b) { return add(b, a); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
inline Tensor operator-(const Tensor& a, const Scalar& b) { return sub(a, b); }
inline Tensor operator-(const Scalar& a, const Tensor& b) { return add(neg(b), a); }
inline Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
inline Tensor operator*(const Tensor& a, const Scalar& b) { return mul(a, b); }
inline Tensor operator*(const Scalar& a, const Tensor& b) { return mul(b, a); }
inline Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
inline Tensor operator/(const Tensor& a, const Scalar& b) { return div(a, b); }
inline Tensor operator-(const Tensor& a) { return neg(a); }
inline Tensor& operator+=(Tensor& a, const Tensor& b) { return a.add_(b); }
inline Tensor& operator+=(Tensor& a, const Scalar& b) { return a.add_(b); }
inline Tensor& operator-=(Tensor& a, const Tensor& b) { return a.sub_(b); }
inline Tensor& operator-=(Tensor& a, const Scalar& b) { return a.sub_(b); }
inline Tensor& operator*=(Tensor& a, const Tensor& b) { return a.mul_(b); }
inline Tensor& operator*=(Tensor& a, const Scalar& b) { return a.mul_(b); }
inline Tensor& operator/=(Tensor& a, const Tensor& b) { return a.div_(b); }
inline Tensor& operator/=(Tensor& a, const Scalar& b) { return a.div_(b); }

}  // namespace gr
