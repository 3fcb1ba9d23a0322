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
#include "core/tensor_indexing.h"

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
// Unary math (autograd/functions/trig.cpp, special.cpp, rounding.cpp): float ops give
// integer and bool inputs float32; rounding keeps integers; every backward is written with
// these differentiable ops (zero for the piecewise-constant ones).
Tensor sin(const Tensor& self);
Tensor cos(const Tensor& self);
Tensor tan(const Tensor& self);
Tensor asin(const Tensor& self);
Tensor acos(const Tensor& self);
Tensor atan(const Tensor& self);
Tensor sinh(const Tensor& self);
Tensor cosh(const Tensor& self);
Tensor erf(const Tensor& self);
Tensor erfc(const Tensor& self);
Tensor erfinv(const Tensor& self);
Tensor rsqrt(const Tensor& self);
Tensor reciprocal(const Tensor& self);
Tensor log1p(const Tensor& self);
Tensor expm1(const Tensor& self);
Tensor log2(const Tensor& self);
Tensor log10(const Tensor& self);
Tensor square(const Tensor& self);
Tensor sign(const Tensor& self);
Tensor floor(const Tensor& self);
Tensor ceil(const Tensor& self);
Tensor round(const Tensor& self);
Tensor round(const Tensor& self, int64_t decimals);  // half to even at `decimals` digits
Tensor trunc(const Tensor& self);
Tensor frac(const Tensor& self);
// log(1 + exp(beta x)) / beta, and x itself where beta x > threshold.
Tensor softplus(const Tensor& self, const Scalar& beta = 1, const Scalar& threshold = 20);
// In-place forms, as libtorch's free functions (each is also a Tensor method).
Tensor& sin_(Tensor& self);
Tensor& cos_(Tensor& self);
Tensor& tan_(Tensor& self);
Tensor& asin_(Tensor& self);
Tensor& acos_(Tensor& self);
Tensor& atan_(Tensor& self);
Tensor& sinh_(Tensor& self);
Tensor& cosh_(Tensor& self);
Tensor& erf_(Tensor& self);
Tensor& erfc_(Tensor& self);
Tensor& erfinv_(Tensor& self);
Tensor& rsqrt_(Tensor& self);
Tensor& reciprocal_(Tensor& self);
Tensor& log1p_(Tensor& self);
Tensor& expm1_(Tensor& self);
Tensor& log2_(Tensor& self);
Tensor& log10_(Tensor& self);
Tensor& square_(Tensor& self);
Tensor& sign_(Tensor& self);
Tensor& floor_(Tensor& self);
Tensor& ceil_(Tensor& self);
Tensor& round_(Tensor& self);
Tensor& round_(Tensor& self, int64_t decimals);
Tensor& trunc_(Tensor& self);
Tensor& frac_(Tensor& self);
Tensor& neg_(Tensor& self);
Tensor& abs_(Tensor& self);
Tensor& exp_(Tensor& self);
Tensor& log_(Tensor& self);
Tensor& sqrt_(Tensor& self);
Tensor& sigmoid_(Tensor& self);
Tensor& tanh_(Tensor& self);

// Binary math (binary_math.cpp, rounding.cpp, clamp.cpp). fmod: C's (the dividend's sign);
// remainder: Python's (the divisor's sign); integer divisors must be nonzero.
Tensor atan2(const Tensor& self, const Tensor& other);
Tensor hypot(const Tensor& self, const Tensor& other);
Tensor fmod(const Tensor& self, const Tensor& other);
Tensor fmod(const Tensor& self, const Scalar& other);
Tensor remainder(const Tensor& self, const Tensor& other);
Tensor remainder(const Tensor& self, const Scalar& other);
Tensor remainder(const Scalar& self, const Tensor& other);
// self + weight * (end - self); all three of one float dtype.
Tensor lerp(const Tensor& self, const Tensor& end, const Scalar& weight);
Tensor lerp(const Tensor& self, const Tensor& end, const Tensor& weight);
// At least one bound; the result dtype promotes self with the bounds; min > max gives max.
Tensor clamp(const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max = std::nullopt);
Tensor clamp(const Tensor& self, const std::optional<Tensor>& min = {}, const std::optional<Tensor>& max = {});
Tensor clamp_min(const Tensor& self, const Scalar& min);
Tensor clamp_min(const Tensor& self, const Tensor& min);
Tensor clamp_max(const Tensor& self, const Scalar& max);
Tensor clamp_max(const Tensor& self, const Tensor& max);
Tensor clip(const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max = std::nullopt);
Tensor clip(const Tensor& self, const std::optional<Tensor>& min = {}, const std::optional<Tensor>& max = {});
Tensor& clamp_(Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max = std::nullopt);
Tensor& clamp_(Tensor& self, const std::optional<Tensor>& min = {}, const std::optional<Tensor>& max = {});
Tensor& clamp_min_(Tensor& self, const Scalar& min);
Tensor& clamp_min_(Tensor& self, const Tensor& min);
Tensor& clamp_max_(Tensor& self, const Scalar& max);
Tensor& clamp_max_(Tensor& self, const Tensor& max);

// Comparisons with a number (comparisons.cpp): promote, then compare; bool results.
Tensor eq(const Tensor& self, const Scalar& other);
Tensor ne(const Tensor& self, const Scalar& other);
Tensor gt(const Tensor& self, const Scalar& other);
Tensor lt(const Tensor& self, const Scalar& other);
Tensor ge(const Tensor& self, const Scalar& other);
Tensor le(const Tensor& self, const Scalar& other);
// Logical ops take any dtypes (nonzero and NaN are true) and give bool.
Tensor logical_and(const Tensor& self, const Tensor& other);
Tensor logical_or(const Tensor& self, const Tensor& other);
Tensor logical_xor(const Tensor& self, const Tensor& other);
Tensor logical_not(const Tensor& self);
// Bitwise ops: bool and integer tensors.
Tensor bitwise_and(const Tensor& self, const Tensor& other);
Tensor bitwise_and(const Tensor& self, const Scalar& other);
Tensor bitwise_or(const Tensor& self, const Tensor& other);
Tensor bitwise_or(const Tensor& self, const Scalar& other);
Tensor bitwise_xor(const Tensor& self, const Tensor& other);
Tensor bitwise_xor(const Tensor& self, const Scalar& other);
Tensor bitwise_not(const Tensor& self);
Tensor isnan(const Tensor& self);
Tensor isinf(const Tensor& self);
Tensor isfinite(const Tensor& self);
// |self - other| <= atol + rtol * |other| element-wise (broadcast; both of one dtype).
Tensor isclose(const Tensor& self, const Tensor& other, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false);
bool allclose(const Tensor& self, const Tensor& other, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false);
// Same shape and dtype, and the same values (NaN never equals).
bool equal(const Tensor& self, const Tensor& other);

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
// Views and splits into views (autograd/functions/shape_views.cpp, splits.cpp).
Tensor broadcast_to(const Tensor& self, IntArrayRef size);
std::vector<Tensor> broadcast_tensors(const TensorList& tensors);
Tensor squeeze(const Tensor& self);
Tensor squeeze(const Tensor& self, int64_t dim);
Tensor squeeze(const Tensor& self, IntArrayRef dims);
Tensor unsqueeze(const Tensor& self, int64_t dim);
Tensor unflatten(const Tensor& self, int64_t dim, IntArrayRef sizes);
Tensor movedim(const Tensor& self, IntArrayRef source, IntArrayRef destination);
Tensor movedim(const Tensor& self, int64_t source, int64_t destination);
Tensor moveaxis(const Tensor& self, IntArrayRef source, IntArrayRef destination);
Tensor moveaxis(const Tensor& self, int64_t source, int64_t destination);
Tensor diagonal(const Tensor& self, int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1);
std::vector<Tensor> chunk(const Tensor& self, int64_t chunks, int64_t dim = 0);
std::vector<Tensor> split(const Tensor& self, int64_t split_size, int64_t dim = 0);
std::vector<Tensor> split(const Tensor& self, IntArrayRef split_sizes, int64_t dim = 0);
std::vector<Tensor> split_with_sizes(const Tensor& self, IntArrayRef split_sizes, int64_t dim = 0);
std::vector<Tensor> tensor_split(const Tensor& self, int64_t sections, int64_t dim = 0);
std::vector<Tensor> tensor_split(const Tensor& self, IntArrayRef indices, int64_t dim = 0);
std::vector<Tensor> unbind(const Tensor& self, int64_t dim = 0);
// indexing "ij" (matrix, the default) or "xy" (Cartesian: the first two outputs' dims swap).
std::vector<Tensor> meshgrid(const TensorList& tensors);
std::vector<Tensor> meshgrid(const TensorList& tensors, std::string_view indexing);
// Copies in another arrangement (autograd/functions/rearrange.cpp, triangular.cpp; diag in shape_views.cpp).
Tensor repeat_interleave(const Tensor& repeats, std::optional<int64_t> output_size = std::nullopt);
Tensor repeat_interleave(const Tensor& self, const Tensor& repeats, std::optional<int64_t> dim = std::nullopt,
                         std::optional<int64_t> output_size = std::nullopt);
Tensor repeat_interleave(const Tensor& self, int64_t repeats, std::optional<int64_t> dim = std::nullopt,
                         std::optional<int64_t> output_size = std::nullopt);
Tensor flip(const Tensor& self, IntArrayRef dims);
Tensor roll(const Tensor& self, IntArrayRef shifts, IntArrayRef dims = {});
Tensor tril(const Tensor& self, int64_t diagonal = 0);
Tensor triu(const Tensor& self, int64_t diagonal = 0);
Tensor diag(const Tensor& self, int64_t diagonal = 0);
Tensor narrow_copy(const Tensor& self, int64_t dim, int64_t start, int64_t length);
// Indexing along a dim (gather_scatter.cpp, index_select.cpp); index tensors are int64.
Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index);
Tensor gather(const Tensor& self, int64_t dim, const Tensor& index, bool sparse_grad = false);
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value);
// reduce: "add" or "multiply".
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce);
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value, std::string_view reduce);
Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);
Tensor index_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha = 1);
Tensor index_copy(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source);
Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value);
Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& value);
// Masks and selection (masked.cpp, where.cpp).
Tensor masked_fill(const Tensor& self, const Tensor& mask, const Scalar& value);
Tensor masked_fill(const Tensor& self, const Tensor& mask, const Tensor& value);
Tensor masked_select(const Tensor& self, const Tensor& mask);
Tensor masked_scatter(const Tensor& self, const Tensor& mask, const Tensor& source);
Tensor where(const Tensor& condition, const Scalar& self, const Tensor& other);
Tensor where(const Tensor& condition, const Scalar& self, const Scalar& other);
std::vector<Tensor> where(const Tensor& condition);  // nonzero(condition) as one index tensor per dim
Tensor nonzero(const Tensor& self);                  // [number of nonzeros, dim] int64
Tensor argwhere(const Tensor& self);
// Sorting (sort.cpp): NaN sorts as the largest value, as torch.
std::tuple<Tensor, Tensor> sort(const Tensor& self, int64_t dim = -1, bool descending = false);
std::tuple<Tensor, Tensor> sort(const Tensor& self, std::optional<bool> stable, int64_t dim = -1,
                                bool descending = false);
Tensor argsort(const Tensor& self, int64_t dim = -1, bool descending = false);
Tensor argsort(const Tensor& self, bool stable, int64_t dim = -1, bool descending = false);
std::tuple<Tensor, Tensor> topk(const Tensor& self, int64_t k, int64_t dim = -1, bool largest = true,
                                bool sorted = true);
// int64 classes -> int64 [..., num_classes]; -1 infers max + 1.
Tensor one_hot(const Tensor& self, int64_t num_classes = -1);
// Advanced indexing (advanced_index.cpp): one entry per dim of self, nullopt taking the whole dim.
Tensor index(const Tensor& self, const std::vector<std::optional<Tensor>>& indices);
Tensor index_put(const Tensor& self, const std::vector<std::optional<Tensor>>& indices, const Tensor& values,
                 bool accumulate = false);
Tensor& index_put_(Tensor& self, const std::vector<std::optional<Tensor>>& indices, const Tensor& values,
                   bool accumulate = false);

// ---- creation, conversion, random and dtypes (breadth) ----

// ---- nn breadth: norm ----
// Normalisation (autograd/functions/layer_norm.cpp, norms.cpp): statistics over the trailing
// normalized_shape dims (layer/rms), over channel groups (group_norm) or per (N, C) instance.
Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight = {},
                  const Tensor& bias = {}, double eps = 1e-5, bool cudnn_enable = true);
// eps nullopt: the input dtype's machine epsilon, as torch.
Tensor rms_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight = {},
                std::optional<double> eps = std::nullopt);
// input [N, C, *], C divisible by num_groups; weight and bias [C].
Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight = {}, const Tensor& bias = {},
                  double eps = 1e-5, bool cudnn_enabled = true);
// input [N, C, *]: batch_norm of each (n, c) instance; running stats (optional) are averaged over N.
Tensor instance_norm(const Tensor& input, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                     const Tensor& running_var, bool use_input_stats, double momentum, double eps,
                     bool cudnn_enabled = true);
// Embeddings (embedding.cpp): weight [num_embeddings, dim], integer indices of any shape ->
// [*indices.shape, dim]; the padding_idx row gets no gradient. scale_grad_by_freq divides
// each row's gradient by its index's count in the batch; sparse gradients are refused.
Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx = -1,
                 bool scale_grad_by_freq = false, bool sparse = false);
// mode 0 sum, 1 mean, 2 max; indices 1-D with offsets (bag starts) or 2-D (one bag per row).
// Returns (output, offset2bag, bag_size, max_indices) as torch's.
std::tuple<Tensor, Tensor, Tensor, Tensor> embedding_bag(const Tensor& weight, const Tensor& indices,
                                                         const Tensor& offsets, bool scale_grad_by_freq = false,
                                                         int64_t mode = 0, bool sparse = false,
                                                         const Tensor& per_sample_weights = {},
                                                         bool include_last_offset = false,
                                                         std::optional<int64_t> padding_idx = std::nullopt);
// Activations (activation_ops.cpp): approximate "none" (erf) or "tanh".
Tensor gelu(const Tensor& self, std::string_view approximate = "none");
Tensor silu(const Tensor& self);
Tensor mish(const Tensor& self);
Tensor leaky_relu(const Tensor& self, const Scalar& negative_slope = 0.01);
// scale * (x > 0 ? x : alpha * (exp(input_scale * x) - 1))
Tensor elu(const Tensor& self, const Scalar& alpha = 1, const Scalar& scale = 1, const Scalar& input_scale = 1);
Tensor selu(const Tensor& self);
Tensor hardtanh(const Tensor& self, const Scalar& min_val = -1, const Scalar& max_val = 1);
Tensor relu6(const Tensor& self);
// weight: one slope, or one per channel (dim 1 of self).
Tensor prelu(const Tensor& self, const Tensor& weight);

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

// ---- nn breadth: attention ----
// softmax(query key^T * scale + attn_mask) value, as libtorch's: query [..., L, E], key
// [..., S, E], value [..., S, Ev] (batch dims broadcast) -> [..., L, Ev]. attn_mask: bool
// (true = attend) or float (added), broadcastable to [..., L, S]; is_causal: key j visible to
// query i when j <= i; scale defaults to 1 / sqrt(E); dropout_p drops weights (default
// generator). A fused kernel (attention.cpp): memory linear in L and S. Rows with no visible
// key give 0.
Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const std::optional<Tensor>& attn_mask = {}, double dropout_p = 0.0,
                                    bool is_causal = false, std::optional<double> scale = std::nullopt);

// ---- shape ----
// Padding (autograd/functions/pad.cpp). `pad` lists (left, right) pairs from the last dim
// backwards, as torch's; negative entries crop. constant_pad_nd pads any trailing dims with
// `value`; reflection/replication pads take 2, 4 or 6 entries for the last 1, 2 or 3 dims of a
// batched or unbatched input ([C, W] / [N, C, W] for 1d, ...); reflection needs each pad
// smaller than its dim, circular at most its dim.
Tensor constant_pad_nd(const Tensor& self, IntArrayRef pad, const Scalar& value = 0);
Tensor reflection_pad1d(const Tensor& self, IntArrayRef padding);
Tensor reflection_pad2d(const Tensor& self, IntArrayRef padding);
Tensor reflection_pad3d(const Tensor& self, IntArrayRef padding);
Tensor replication_pad1d(const Tensor& self, IntArrayRef padding);
Tensor replication_pad2d(const Tensor& self, IntArrayRef padding);
Tensor replication_pad3d(const Tensor& self, IntArrayRef padding);
Tensor _pad_circular(const Tensor& self, IntArrayRef pad);
// mode "constant", "reflect", "replicate" or "circular"; value only for "constant" (default 0).
Tensor pad(const Tensor& self, IntArrayRef pad, std::string_view mode = "constant",
           std::optional<double> value = std::nullopt);
// Interpolation (autograd/functions/upsample.cpp) over the trailing 1, 2 or 3 dims of [N, C, ...],
// torch's coordinate rules: scales (the user's scale factors) replace in/out size ratios when
// given; nearest takes floor(o * in / out), nearest_exact floor((o + 0.5) * in / out).
Tensor upsample_nearest1d(const Tensor& self, IntArrayRef output_size, std::optional<double> scales = std::nullopt);
Tensor upsample_nearest2d(const Tensor& self, IntArrayRef output_size, std::optional<double> scales_h = std::nullopt,
                          std::optional<double> scales_w = std::nullopt);
Tensor upsample_nearest3d(const Tensor& self, IntArrayRef output_size, std::optional<double> scales_d = std::nullopt,
                          std::optional<double> scales_h = std::nullopt, std::optional<double> scales_w = std::nullopt);
Tensor _upsample_nearest_exact1d(const Tensor& self, IntArrayRef output_size,
                                 std::optional<double> scales = std::nullopt);
Tensor _upsample_nearest_exact2d(const Tensor& self, IntArrayRef output_size,
                                 std::optional<double> scales_h = std::nullopt,
                                 std::optional<double> scales_w = std::nullopt);
Tensor _upsample_nearest_exact3d(const Tensor& self, IntArrayRef output_size,
                                 std::optional<double> scales_d = std::nullopt,
                                 std::optional<double> scales_h = std::nullopt,
                                 std::optional<double> scales_w = std::nullopt);
Tensor upsample_linear1d(const Tensor& self, IntArrayRef output_size, bool align_corners,
                         std::optional<double> scales = std::nullopt);
Tensor upsample_bilinear2d(const Tensor& self, IntArrayRef output_size, bool align_corners,
                           std::optional<double> scales_h = std::nullopt, std::optional<double> scales_w = std::nullopt);
Tensor upsample_trilinear3d(const Tensor& self, IntArrayRef output_size, bool align_corners,
                            std::optional<double> scales_d = std::nullopt,
                            std::optional<double> scales_h = std::nullopt,
                            std::optional<double> scales_w = std::nullopt);

// ---- conv ----
// 1-D convolution (conv2d over a unit height): input [N, C_in, L], weight [C_out, C_in / groups, k].
Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias = {}, IntArrayRef stride = 1,
              IntArrayRef padding = 0, IntArrayRef dilation = 1, int64_t groups = 1);
// Transposed convolutions (conv2d's input gradient; Note [Transposed convolution] in
// core/native/conv2d.h): input [N, C_in, H, W], weight [C_in, C_out / groups, kH, kW] ->
// [N, C_out, (H - 1) * stride - 2 * padding + dilation * (kH - 1) + output_padding + 1, ...];
// output_padding below the stride or the dilation. conv_transpose1d: [N, C_in, L] with weight
// [C_in, C_out / groups, k].
Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const Tensor& bias = {}, IntArrayRef stride = 1,
                        IntArrayRef padding = 0, IntArrayRef output_padding = 0, int64_t groups = 1,
                        IntArrayRef dilation = 1);
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias = {}, IntArrayRef stride = 1,
                        IntArrayRef padding = 0, IntArrayRef output_padding = 0, int64_t groups = 1,
                        IntArrayRef dilation = 1);
// [*, C * r * r, H, W] -> [*, C, H * r, W * r], and back.
Tensor pixel_shuffle(const Tensor& self, int64_t upscale_factor);
Tensor pixel_unshuffle(const Tensor& self, int64_t downscale_factor);

}  // namespace gr
