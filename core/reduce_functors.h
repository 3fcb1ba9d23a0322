// Reduction arithmetic written once: GR_HOST_DEVICE ops run by the CPU reduction loops
// (core/native/reduce_cpu.cpp) and the CUDA kernels (cuda_kernels/reduce.cuh) alike.
// See Note [Reduction ops].
#pragma once

#include <math.h>

#include <cstdint>
#include <type_traits>

#include "core/functors.h"

namespace gr::reduce_ops {

// Note [Reduction ops]
// An op folds input values into an accumulator (reduce), merges two partial accumulators
// (combine: the CPU's lanes and chunks and the CUDA trees use it, so the order of combination
// is the only difference between devices) and maps the final accumulator to the result
// (project). identity() is the accumulator of an empty reduction. Inputs reach reduce() as
// value_t: bfloat16/float16 widened to float32. Sums, products and norms accumulate in acc_t:
// float32 and float64 in double, bfloat16/float16 in float32 and rounded once at the end (as
// PyTorch), integers and bool in int64.

template <class T>
using value_t = std::conditional_t<std::is_same_v<T, BFloat16> || std::is_same_v<T, Half>, float, T>;
template <class T>
using acc_t = std::conditional_t<std::is_floating_point_v<value_t<T>>,
                                 std::conditional_t<std::is_same_v<value_t<T>, float> && !std::is_same_v<T, float>,
                                                    float, double>,
                                 int64_t>;

// The extremes of a value type (-inf and inf for floats).
template <class T>
GR_HOST_DEVICE GR_INLINE T highest() {
  if constexpr (std::is_floating_point_v<T>) return static_cast<T>(INFINITY);
  else if constexpr (std::is_same_v<T, bool>) return true;
  else if constexpr (std::is_signed_v<T>) return static_cast<T>(static_cast<std::make_unsigned_t<T>>(~0ull) >> 1);
  else return static_cast<T>(~0ull);
}
template <class T>
GR_HOST_DEVICE GR_INLINE T lowest() {
  if constexpr (std::is_floating_point_v<T>) return static_cast<T>(-INFINITY);
  else if constexpr (std::is_same_v<T, bool>) return false;
  else if constexpr (std::is_signed_v<T>) return static_cast<T>(-highest<T>() - 1);
  else return T(0);
}

template <class Acc>
struct Sum {
  GR_HOST_DEVICE Acc identity() const { return Acc(0); }
  template <class T>
  GR_HOST_DEVICE Acc reduce(Acc a, T x) const { return a + static_cast<Acc>(x); }
  GR_HOST_DEVICE Acc combine(Acc a, Acc b) const { return a + b; }
  GR_HOST_DEVICE Acc project(Acc a) const { return a; }
};

template <class Acc>
struct Prod {
  GR_HOST_DEVICE Acc identity() const { return Acc(1); }
  template <class T>
  GR_HOST_DEVICE Acc reduce(Acc a, T x) const { return a * static_cast<Acc>(x); }
  GR_HOST_DEVICE Acc combine(Acc a, Acc b) const { return a * b; }
  GR_HOST_DEVICE Acc project(Acc a) const { return a; }
};

// amax/amin: NaN wins, as in torch. Acc is the value type itself (no rounding).
template <class Acc>
struct Max {
  GR_HOST_DEVICE Acc identity() const { return lowest<Acc>(); }
  GR_HOST_DEVICE Acc reduce(Acc a, Acc x) const { return (math::isnan(a) || a > x) ? a : x; }
  GR_HOST_DEVICE Acc combine(Acc a, Acc b) const { return reduce(a, b); }
  GR_HOST_DEVICE Acc project(Acc a) const { return a; }
};
template <class Acc>
struct Min {
  GR_HOST_DEVICE Acc identity() const { return highest<Acc>(); }
  GR_HOST_DEVICE Acc reduce(Acc a, Acc x) const { return (math::isnan(a) || a < x) ? a : x; }
  GR_HOST_DEVICE Acc combine(Acc a, Acc b) const { return reduce(a, b); }
  GR_HOST_DEVICE Acc project(Acc a) const { return a; }
};

// Vector norms of floating inputs. The kind is chosen by p on the host (see norm_kind).
template <class Acc>
struct Norm0 : Sum<Acc> {  // the number of non-zeros
  template <class T>
  GR_HOST_DEVICE Acc reduce(Acc a, T x) const { return a + (x != T(0) ? Acc(1) : Acc(0)); }
};
template <class Acc>
struct Norm1 : Sum<Acc> {
  template <class T>
  GR_HOST_DEVICE Acc reduce(Acc a, T x) const { return a + math::fabs(static_cast<Acc>(x)); }
};
template <class Acc>
struct Norm2 : Sum<Acc> {
  template <class T>
  GR_HOST_DEVICE Acc reduce(Acc a, T x) const {
    const Acc v = static_cast<Acc>(x);
    return a + v * v;
  }
  GR_HOST_DEVICE Acc project(Acc a) const { return math::sqrt(a); }
};
template <class Acc>
struct NormP : Sum<Acc> {
  Acc p;
  template <class T>
  GR_HOST_DEVICE Acc reduce(Acc a, T x) const { return a + math::pow(math::fabs(static_cast<Acc>(x)), p); }
  GR_HOST_DEVICE Acc project(Acc a) const { return math::pow(a, Acc(1) / p); }
};
template <class Acc>
struct NormInf : Max<Acc> {  // |x| >= 0, so 0 is the identity of the fold
  GR_HOST_DEVICE Acc identity() const { return Acc(0); }
  template <class T>
  GR_HOST_DEVICE Acc reduce(Acc a, T x) const { return Max<Acc>::reduce(a, math::fabs(static_cast<Acc>(x))); }
};
template <class Acc>
struct NormNegInf : Min<Acc> {
  template <class T>
  GR_HOST_DEVICE Acc reduce(Acc a, T x) const { return Min<Acc>::reduce(a, math::fabs(static_cast<Acc>(x))); }
};

// The op of a norm of order p (on the host), handed to f: the CPU loop, the CUDA multi-tensor
// norm (cuda_kernels/foreach.cu) and the combination of per-tensor norms take it from here.
template <class Acc, class F>
void with_norm_op(double p, const F& f) {
  if (p == 0) f(Norm0<Acc>{});
  else if (p == 1) f(Norm1<Acc>{});
  else if (p == 2) f(Norm2<Acc>{});
  else if (p == INFINITY) f(NormInf<Acc>{});
  else if (p == -INFINITY) f(NormNegInf<Acc>{});
  else f(NormP<Acc>{{}, static_cast<Acc>(p)});
}

// any / all / count_nonzero: a value counts when it is not zero (NaN is not zero).
struct Any {
  GR_HOST_DEVICE bool identity() const { return false; }
  template <class T>
  GR_HOST_DEVICE bool reduce(bool a, T x) const { return a || x != T(0); }
  GR_HOST_DEVICE bool combine(bool a, bool b) const { return a || b; }
  GR_HOST_DEVICE bool project(bool a) const { return a; }
};
struct All {
  GR_HOST_DEVICE bool identity() const { return true; }
  template <class T>
  GR_HOST_DEVICE bool reduce(bool a, T x) const { return a && x != T(0); }
  GR_HOST_DEVICE bool combine(bool a, bool b) const { return a && b; }
  GR_HOST_DEVICE bool project(bool a) const { return a; }
};
struct CountNonzero : Sum<int64_t> {
  template <class T>
  GR_HOST_DEVICE int64_t reduce(int64_t a, T x) const { return a + (x != T(0) ? 1 : 0); }
};

// Welford's running mean and sum of squared deviations (var, std, var_mean, std_mean).
template <class Acc>
struct WelfordData {
  Acc mean, m2;
  int64_t n;
};
template <class Acc>
struct Welford {
  GR_HOST_DEVICE WelfordData<Acc> identity() const { return {Acc(0), Acc(0), 0}; }
  // One value into a run that has n values before it; inv_n1 = 1 / (n + 1).
  GR_HOST_DEVICE static void update(Acc& mean, Acc& m2, Acc x, Acc inv_n1) {
    const Acc delta = x - mean;
    mean += delta * inv_n1;
    m2 += delta * (x - mean);
  }
  template <class T>
  GR_HOST_DEVICE WelfordData<Acc> reduce(WelfordData<Acc> a, T x) const {
    ++a.n;
    update(a.mean, a.m2, static_cast<Acc>(x), Acc(1) / static_cast<Acc>(a.n));
    return a;
  }
  // Chan et al.'s pairwise combination.
  GR_HOST_DEVICE WelfordData<Acc> combine(WelfordData<Acc> a, WelfordData<Acc> b) const {
    if (a.n == 0) return b;
    if (b.n == 0) return a;
    const int64_t n = a.n + b.n;
    const Acc delta = b.mean - a.mean, frac_b = static_cast<Acc>(b.n) / static_cast<Acc>(n);
    return {a.mean + delta * frac_b, a.m2 + b.m2 + delta * delta * static_cast<Acc>(a.n) * frac_b, n};
  }
};
// The variance from Welford's data: divided by max(n - correction, 0), as torch (0 gives inf or nan).
template <class Acc>
GR_HOST_DEVICE GR_INLINE Acc welford_var(const WelfordData<Acc>& a, double correction) {
  const double dof = static_cast<double>(a.n) - correction;
  return a.m2 / static_cast<Acc>(dof > 0 ? dof : 0.0);
}

// ---- what is written per output (the kernels call store(k, acc) for output k) ----

// The op's projection, converted to Out.
template <class Out, class Op>
struct ProjectTo {
  Out* out;
  Op op;
  template <class Acc>
  GR_HOST_DEVICE void operator()(int64_t k, Acc a) const { out[k] = functors::Convert<Out, Acc>()(op.project(a)); }
};
// A sum divided by the count (mean), rounded once.
template <class Out, class Acc>
struct MeanTo {
  Out* out;
  Acc divisor;
  GR_HOST_DEVICE void operator()(int64_t k, Acc a) const { out[k] = functors::Convert<Out, Acc>()(a / divisor); }
};
// var (or std) and, when mean_out is set, the mean (NaN for an empty run).
template <class Out, class Acc>
struct VarTo {
  Out* out;
  Out* mean_out;
  double correction;
  bool take_sqrt;
  GR_HOST_DEVICE void operator()(int64_t k, WelfordData<Acc> d) const {
    const functors::Convert<Out, Acc> cvt;
    const Acc v = welford_var(d, correction);
    out[k] = cvt(take_sqrt ? math::sqrt(v) : v);
    if (mean_out) mean_out[k] = cvt(d.n > 0 ? d.mean : static_cast<Acc>(NAN));
  }
};

// The dtype sum, prod, cumsum and cumprod return for input T: floats keep theirs, integers
// and bool widen to int64.
template <class T>
using sum_out_t = std::conditional_t<std::is_floating_point_v<value_t<T>>, T, int64_t>;

}  // namespace gr::reduce_ops
