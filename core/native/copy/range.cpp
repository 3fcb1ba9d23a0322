// arange, linspace and logspace values: element counts, checks and rounding as torch's CPU
// kernels (ATen's RangeFactories*.cpp). Compiled with -ffp-contract=off (core/CMakeLists.txt):
// the fused multiply-adds below are the ones torch's build makes, written out.
#include "core/native/copy/range.h"

#include <cmath>
#include <limits>

#include "core/factory.h"
#include "core/functors.h"

namespace gr::native {

// Note [Range rounding]
// torch fills a range with AVX2 vectors of W = 32 bytes / element size, two vectors per step,
// and a scalar loop for the n % (2 W) elements at the end. A vector's first element is
// computed from the index like a scalar one (arange: start + step * i, fused, in the
// accumulation type; linspace: from start below the halfway index and from end at and above
// it, judged at the vector's first index); its other elements are first + k * step. So values
// differ from start + i * step in the last bit here and there, and these functions reproduce
// torch's values exactly: bit for bit for float32, float64 and the integers (checked against
// torch 1.13 and 2.x in test_creation.cpp), for ranges of up to 32768 elements (longer ones
// torch splits across its threads, each split starting its own vectors).
namespace {

// Arithmetic in T as c10 does it: bfloat16/float16 round after every operation.
template <class T>
struct TArith {
  static T add(T a, T b) { return a + b; }
  static T sub(T a, T b) { return a - b; }
  static T mul(T a, T b) { return a * b; }
  static T div(T a, T b) { return a / b; }
};
template <class T>
  requires is_reduced_float_v<T>
struct TArith<T> {
  static T add(T a, T b) { return T(static_cast<float>(a) + static_cast<float>(b)); }
  static T sub(T a, T b) { return T(static_cast<float>(a) - static_cast<float>(b)); }
  static T mul(T a, T b) { return T(static_cast<float>(a) * static_cast<float>(b)); }
  static T div(T a, T b) { return T(static_cast<float>(a) / static_cast<float>(b)); }
};

// Fills out[0, n): first(i) for a scalar element or a vector's first element, next(first, k)
// for element k of a vector. See Note [Range rounding].
template <class T, class First, class Next>
void fill_vectorised(T* out, int64_t n, const First& first, const Next& next) {
  constexpr int64_t W = 32 / static_cast<int64_t>(sizeof(T));
  const int64_t vec_end = n - n % (2 * W);
  for (int64_t i = 0; i < vec_end; i += W) {
    const T base = first(i);
    out[i] = base;
    for (int64_t k = 1; k < W; ++k) out[i + k] = next(base, k);
  }
  for (int64_t i = vec_end; i < n; ++i) out[i] = first(i);
}

template <class T>
void arange_fill(T* out, int64_t n, const Scalar& start, const Scalar& step) {
  if constexpr (std::is_integral_v<T>) {  // in int64, exact; wraps into T
    const int64_t s = start.to<int64_t>(), d = step.to<int64_t>();
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(static_cast<int64_t>(static_cast<uint64_t>(s) + static_cast<uint64_t>(d) * static_cast<uint64_t>(i)));
  } else if constexpr (is_reduced_float_v<T>) {  // accumulates in float, unfused
    const float s = start.to<float>(), d = step.to<float>();
    fill_vectorised(
        out, n, [&](int64_t i) { return T(s + d * static_cast<float>(i)); },
        [&](T base, int64_t k) { return T(static_cast<float>(base) + static_cast<float>(k) * d); });
  } else {  // accumulates in double, fused
    const double s = start.to<double>(), d = step.to<double>();
    fill_vectorised(
        out, n, [&](int64_t i) { return static_cast<T>(math::fma(d, static_cast<double>(i), s)); },
        [&](T base, int64_t k) {
          return static_cast<T>(k == 1 ? static_cast<double>(base) + d
                                       : math::fma(static_cast<double>(k), d, static_cast<double>(base)));
        });
  }
}

template <class T>
void linspace_fill(T* out, int64_t steps, const Scalar& start_s, const Scalar& end_s) {
  const T start = start_s.to<T>(), end = end_s.to<T>();
  const int64_t halfway = steps / 2;
  if constexpr (std::is_integral_v<T>) {  // the step in double; values truncate
    const double step = (static_cast<double>(end) - static_cast<double>(start)) / static_cast<double>(steps - 1);
    auto first = [&](int64_t i) {
      return convert<T>(i < halfway ? math::fma(step, static_cast<double>(i), static_cast<double>(start))
                                    : math::fma(-step, static_cast<double>(steps - i - 1), static_cast<double>(end)));
    };
    fill_vectorised(out, steps, first,
                    [&](T base, int64_t k) { return convert<T>(static_cast<double>(k) * step + static_cast<double>(base)); });
  } else {  // the step and the values in T (fused for float32/float64, as torch's build)
    using A = TArith<T>;
    const T step = A::div(A::sub(end, start), static_cast<T>(steps - 1));
    auto first = [&](int64_t i) -> T {
      if constexpr (is_reduced_float_v<T>) {
        return i < halfway ? A::add(start, A::mul(step, static_cast<T>(i)))
                           : A::sub(end, A::mul(step, static_cast<T>(steps - i - 1)));
      } else {
        return i < halfway ? math::fma(step, static_cast<T>(i), start)
                           : math::fma(-step, static_cast<T>(steps - i - 1), end);
      }
    };
    fill_vectorised(out, steps, first, [&](T base, int64_t k) { return A::add(base, A::mul(static_cast<T>(k), step)); });
  }
}

template <class T>
void logspace_fill(T* out, int64_t steps, const Scalar& start_s, const Scalar& end_s, double base) {
  const T start = start_s.to<T>(), end = end_s.to<T>();
  T diff;
  if constexpr (std::is_integral_v<T>) diff = static_cast<T>(end - start);
  else diff = TArith<T>::sub(end, start);
  const double step = static_cast<double>(diff) / static_cast<double>(steps - 1);
  const int64_t halfway = steps / 2;
  for (int64_t i = 0; i < steps; ++i) {
    const double x = i < halfway ? static_cast<double>(start) + step * static_cast<double>(i)
                                 : static_cast<double>(end) - step * static_cast<double>(steps - i - 1);
    out[i] = convert<T>(std::pow(base, x));
  }
}

void check_range_dtype(ScalarType dtype, const char* op) {
  GR_CHECK(dtype != kBool, op, ": dtype bool is not supported (as torch's '", op, "_cpu' not implemented for 'Bool')");
}

}  // namespace

Tensor arange_cpu(const Scalar& start, const Scalar& end, const Scalar& step, ScalarType dtype) {
  check_range_dtype(dtype, "arange");
  // The count in double, except for int64, whose bounds are taken as integers first (as
  // torch: arange(0, 2.5, 1, int64) has 2 values, the float32 one 3).
  const bool integral = is_integral(dtype, false);
  double size_d;
  if (dtype == kInt64) {
    size_d = std::ceil(static_cast<double>(end.toLong() - start.toLong()) / static_cast<double>(step.toLong()));
  } else {
    size_d = std::ceil((end.to<double>() - start.to<double>()) / step.to<double>());
  }
  const double s = integral ? static_cast<double>(start.toLong()) : start.to<double>();
  const double e = integral ? static_cast<double>(end.toLong()) : end.to<double>();
  const double d = integral ? static_cast<double>(step.toLong()) : step.to<double>();
  GR_CHECK(d != 0, "arange: step must be nonzero (start ", start.to<double>(), ", end ", end.to<double>(), ", step ",
           step.to<double>(), integral ? " taken as an integer for an integer dtype)" : ")");
  GR_CHECK(std::isfinite(s) && std::isfinite(e), "arange: unsupported range: ", s, " -> ", e);
  GR_CHECK((d > 0 && e >= s) || (d < 0 && e <= s), "arange: upper bound ", e, " and lower bound ", s,
           " are inconsistent with step sign ", d);
  GR_CHECK(size_d >= 0 && size_d <= static_cast<double>(std::numeric_limits<int64_t>::max()),
           "arange: invalid size ", size_d, ", possible overflow?");
  Tensor out = empty({static_cast<int64_t>(size_d)}, TensorOptions(dtype));
  dispatch_all(dtype, "arange", [&]<class T>() {
    if constexpr (!std::is_same_v<T, bool>) arange_fill(out.data_ptr<T>(), out.numel(), start, step);
  });
  return out;
}

Tensor linspace_cpu(const Scalar& start, const Scalar& end, int64_t steps, ScalarType dtype) {
  GR_CHECK(steps >= 0, "linspace: number of steps must be non-negative, got ", steps);
  check_range_dtype(dtype, "linspace");
  Tensor out = empty({steps}, TensorOptions(dtype));
  if (steps == 1) return full({1}, start, TensorOptions(dtype));
  dispatch_all(dtype, "linspace", [&]<class T>() {
    if constexpr (!std::is_same_v<T, bool>) linspace_fill(out.data_ptr<T>(), steps, start, end);
  });
  return out;
}

Tensor logspace_cpu(const Scalar& start, const Scalar& end, int64_t steps, double base, ScalarType dtype) {
  GR_CHECK(steps >= 0, "logspace: number of steps must be non-negative, got ", steps);
  check_range_dtype(dtype, "logspace");
  Tensor out = empty({steps}, TensorOptions(dtype));
  if (steps == 1) return full({1}, std::pow(base, start.to<double>()), TensorOptions(dtype));
  dispatch_all(dtype, "logspace", [&]<class T>() {
    if constexpr (!std::is_same_v<T, bool>) logspace_fill(out.data_ptr<T>(), steps, start, end, base);
  });
  return out;
}

}  // namespace gr::native
