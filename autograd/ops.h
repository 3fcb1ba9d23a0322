// The public differentiable ops (gr::add, gr::conv2d, ...), libtorch's names with gr::
// for torch::. Each is implemented, forward and backward together, in autograd/functions/.
#pragma once

#include <concepts>
#include <optional>
#include <string_view>
#include <tuple>

#include "core/generator.h"
#include "core/reduction.h"
#include "core/tensor.h"

namespace gr {


// ---- element-wise (NumPy broadcasting, dtype promotion) ----
Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor add(const Tensor& a, const Scalar& b);
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor sub(const Tensor& a, const Scalar& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Scalar& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Scalar& b);
Tensor neg(const Tensor& a);
Tensor exp(const Tensor& a);
Tensor log(const Tensor& a);
Tensor sqrt(const Tensor& a);
Tensor abs(const Tensor& a);
Tensor pow(const Tensor& a, const Scalar& exponent);
Tensor pow(const Tensor& a, const Tensor& exponent);
Tensor relu(const Tensor& a);
Tensor sigmoid(const Tensor& a);
Tensor tanh(const Tensor& a);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b);
Tensor where(const Tensor& condition, const Tensor& a, const Scalar& b);

// ---- comparisons (bool, not differentiable) ----
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);

// ---- linear algebra ----
Tensor matmul(const Tensor& a, const Tensor& b);
Tensor mm(const Tensor& a, const Tensor& b);
Tensor bmm(const Tensor& a, const Tensor& b);
// x @ weight^T + bias, weight [out, in].
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = {});

// ---- shape ----
Tensor cat(const TensorList& tensors, int64_t dim = 0);
Tensor stack(const TensorList& tensors, int64_t dim = 0);

// ---- neural network ----
// input [N, C_in, H, W], weight [C_out, C_in / groups, kH, kW]; stride/padding/dilation
// take one value for both dims or two.
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias = {}, IntArrayRef stride = 1,
              IntArrayRef padding = 0, IntArrayRef dilation = 1, int64_t groups = 1);
// stride empty = kernel_size.
Tensor max_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = 0,
                  IntArrayRef dilation = 1, bool ceil_mode = false);
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, IntArrayRef kernel_size,
                                                   IntArrayRef stride = {}, IntArrayRef padding = 0,
                                                   IntArrayRef dilation = 1, bool ceil_mode = false);
Tensor avg_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = 0,
                  bool ceil_mode = false, bool count_include_pad = true);
Tensor adaptive_avg_pool2d(const Tensor& input, IntArrayRef output_size);
// Training: normalises with batch statistics over (N, H, W) and updates running_mean /
// running_var (unbiased) in place with `momentum`. Eval: uses the running statistics.
Tensor batch_norm(const Tensor& input, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                  const Tensor& running_var, bool training, double momentum = 0.1, double eps = 1e-5);
Tensor log_softmax(const Tensor& x, int64_t dim);
Tensor softmax(const Tensor& x, int64_t dim);
// input [N, C] (or [C]) of log-probabilities, target [N] int64 class indices.
Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight = {},
                Reduction reduction = Reduction::Mean, int64_t ignore_index = -100);
Tensor cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight = {},
                     Reduction reduction = Reduction::Mean, int64_t ignore_index = -100);
Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean);
// Zeroes each element with probability p and scales the rest by 1/(1-p) when training.
Tensor dropout(const Tensor& input, double p = 0.5, bool train = true, Generator* gen = nullptr);

// Note [Op families]: one section per family; each op's forward and backward live in its
// own file of autograd/functions/ (see Note [Double backward] in autograd/function.h for how
// a backward is written).

// ---- element-wise math and comparisons (breadth) ----

// ---- reductions and linear algebra (breadth) ----
// Reductions take libtorch's overloads; a dim list that is nullopt or empty means all dims.
// bfloat16/float16 inputs accumulate in float32 and are rounded once.
Tensor sum(const Tensor& x, std::optional<ScalarType> dtype = std::nullopt);
Tensor sum(const Tensor& x, OptionalIntArrayRef dim, bool keepdim = false,
           std::optional<ScalarType> dtype = std::nullopt);  // integers and bool sum to int64
Tensor mean(const Tensor& x, std::optional<ScalarType> dtype = std::nullopt);
Tensor mean(const Tensor& x, OptionalIntArrayRef dim, bool keepdim = false,
            std::optional<ScalarType> dtype = std::nullopt);
Tensor prod(const Tensor& x, std::optional<ScalarType> dtype = std::nullopt);
Tensor prod(const Tensor& x, int64_t dim, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt);
// var/std divide by N - correction (unbiased: correction 1). As in libtorch, var(x, dims, 0)
// picks the `unbiased` overload; pass a Scalar (or std::optional<Scalar>) for other corrections.
// The one-argument `unbiased` forms take exactly a bool, so var(x, {1}) and x.var({1}) reduce
// dim 1 (a braced {1} would otherwise convert to bool).
Tensor var(const Tensor& x, OptionalIntArrayRef dim, bool unbiased, bool keepdim = false);
Tensor var(const Tensor& x, OptionalIntArrayRef dim = std::nullopt,
           const std::optional<Scalar>& correction = std::nullopt, bool keepdim = false);
template <std::same_as<bool> B>  // exactly bool: a braced {1} must pick the dim overloads
Tensor var(const Tensor& x, B unbiased) {
  return var(x, std::nullopt, static_cast<bool>(unbiased));
}
Tensor std(const Tensor& x, OptionalIntArrayRef dim, bool unbiased, bool keepdim = false);
Tensor std(const Tensor& x, OptionalIntArrayRef dim = std::nullopt,
           const std::optional<Scalar>& correction = std::nullopt, bool keepdim = false);
template <std::same_as<bool> B>  // exactly bool: a braced {1} must pick the dim overloads
Tensor std(const Tensor& x, B unbiased) {
  return std(x, std::nullopt, static_cast<bool>(unbiased));
}
std::tuple<Tensor, Tensor> var_mean(const Tensor& x, OptionalIntArrayRef dim, bool unbiased, bool keepdim = false);
std::tuple<Tensor, Tensor> var_mean(const Tensor& x, OptionalIntArrayRef dim = std::nullopt,
                                    const std::optional<Scalar>& correction = std::nullopt, bool keepdim = false);
template <std::same_as<bool> B>  // exactly bool: a braced {1} must pick the dim overloads
std::tuple<Tensor, Tensor> var_mean(const Tensor& x, B unbiased) {
  return var_mean(x, std::nullopt, static_cast<bool>(unbiased));
}
std::tuple<Tensor, Tensor> std_mean(const Tensor& x, OptionalIntArrayRef dim, bool unbiased, bool keepdim = false);
std::tuple<Tensor, Tensor> std_mean(const Tensor& x, OptionalIntArrayRef dim = std::nullopt,
                                    const std::optional<Scalar>& correction = std::nullopt, bool keepdim = false);
template <std::same_as<bool> B>  // exactly bool: a braced {1} must pick the dim overloads
std::tuple<Tensor, Tensor> std_mean(const Tensor& x, B unbiased) {
  return std_mean(x, std::nullopt, static_cast<bool>(unbiased));
}
// p-norms: p = 0 counts non-zeros, +-inf take the max/min of |x|; p nullopt means 2.
Tensor norm(const Tensor& x, const Scalar& p = 2);
Tensor norm(const Tensor& x, const std::optional<Scalar>& p, ScalarType dtype);
Tensor norm(const Tensor& x, const std::optional<Scalar>& p, IntArrayRef dim, bool keepdim = false);
Tensor norm(const Tensor& x, const std::optional<Scalar>& p, IntArrayRef dim, bool keepdim, ScalarType dtype);
// torch.norm's string form: "fro" (the 2-norm of the elements over dim); "nuc" is refused.
// (A string literal binds to the array overloads exactly: a const char* parameter would also
// take the literal 0, and Scalar's bool constructor takes any pointer.)
Tensor norm(const Tensor& x, std::string_view p, IntArrayRef dim = {}, bool keepdim = false);
template <size_t N>
Tensor norm(const Tensor& x, const char (&p)[N], IntArrayRef dim = {}, bool keepdim = false) {
  return norm(x, std::string_view(p), dim, keepdim);
}
Tensor frobenius_norm(const Tensor& x, IntArrayRef dim, bool keepdim = false);
Tensor logsumexp(const Tensor& x, IntArrayRef dim, bool keepdim = false);
// Running sum/product along dim (integers and bool give int64 unless dtype says otherwise).
Tensor cumsum(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
Tensor cumprod(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
// max/min of all elements, or along dim with the index of the first extreme (NaN wins).
Tensor max(const Tensor& x);
std::tuple<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim = false);  // values, indices
Tensor min(const Tensor& x);
std::tuple<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim = false);
// amax/amin: gradient shared evenly by the elements equal to the result.
Tensor amax(const Tensor& x, IntArrayRef dim = {}, bool keepdim = false);
Tensor amin(const Tensor& x, IntArrayRef dim = {}, bool keepdim = false);
// With no dim, the index into the flattened tensor.
Tensor argmax(const Tensor& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor argmin(const Tensor& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
// The lower of the two middle values (NaN if any is NaN); nanmedian ignores NaN.
Tensor median(const Tensor& x);
std::tuple<Tensor, Tensor> median(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor nanmedian(const Tensor& x);
std::tuple<Tensor, Tensor> nanmedian(const Tensor& x, int64_t dim, bool keepdim = false);
// Logical reductions (not differentiable): bool results, uint8 for uint8 input (as torch).
Tensor any(const Tensor& x);
Tensor any(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor any(const Tensor& x, OptionalIntArrayRef dim, bool keepdim = false);
Tensor all(const Tensor& x);
Tensor all(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor all(const Tensor& x, OptionalIntArrayRef dim, bool keepdim = false);
Tensor count_nonzero(const Tensor& x, IntArrayRef dim);
Tensor count_nonzero(const Tensor& x, std::optional<int64_t> dim = std::nullopt);

// beta * self + alpha * (mat1 @ mat2); self broadcasts to the product's shape. beta == 0
// ignores self (even NaN), as torch.
Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta = 1,
             const Scalar& alpha = 1);
// beta * self + alpha * sum_i batch1[i] @ batch2[i]
Tensor addbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta = 1,
              const Scalar& alpha = 1);
// beta * self + alpha * bmm(batch1, batch2)
Tensor baddbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta = 1,
               const Scalar& alpha = 1);
Tensor dot(const Tensor& a, const Tensor& b);
Tensor mv(const Tensor& mat, const Tensor& vec);
Tensor outer(const Tensor& a, const Tensor& b);
Tensor ger(const Tensor& a, const Tensor& b);  // outer's old name
// Contracts dims_a of a with dims_b of b; the int form contracts a's last `dims` dims with b's first.
Tensor tensordot(const Tensor& a, const Tensor& b, IntArrayRef dims_a, IntArrayRef dims_b);
Tensor tensordot(const Tensor& a, const Tensor& b, int64_t dims = 2);
// Einstein summation: "ij,jk->ik", repeated indices (traces, diagonals), "..." broadcasting,
// implicit outputs; contracted pairwise by batched matrix products, left to right. `path`
// (opt_einsum's contraction order) is accepted for libtorch's signature and must be empty.
Tensor einsum(std::string_view equation, const TensorList& tensors, OptionalIntArrayRef path = std::nullopt);

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
}  // namespace linalg

// ---- shape and indexing (breadth) ----

// ---- creation, conversion, random and dtypes (breadth) ----

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
