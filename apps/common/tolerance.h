// The rule by which the apps that validate results (gpu_selftest's checks, bench_ops'
// validation) compare a computed value with its reference, and the tolerances they share,
// each with its reason (Note [Comparison tolerances]).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace gr::apps {

// Note [Comparison tolerances]
// An element passes when |got - want| <= atol + rtol * |want| (NaN passes only against NaN).
// rtol carries what scales with the value itself: its final rounding, an epilogue (bias,
// activation), a formula evaluated in another order. atol carries what does not: a float32
// sum of K terms of magnitude s loses about K * u * s to rounding (u = 2^-24) whatever the
// sum's value, because its partial sums, not its result, set the size of each rounding. Where
// the terms cancel (results near zero) only atol covers that; a relative test there fails on
// correct results (issue 32: gpu_selftest's max rel 5e-2 at max |diff| 9e-5).
// How large: the first H200 run measured 1.6-2.0 K u s at the largest of 10^5 elements
// (conv_transpose2d K = 784, linear K = 768: cuDNN's and cuBLAS's orders against the CPU's);
// the same K unit-normal products summed front to back and back to front in float32 differ by
// at most 0.4-0.5 K u s over 2 x 10^4 sums (tests/apps/test_tolerance.cpp). kSumSlack = 4
// leaves a factor two over the worst measured.
struct Tol {
  double rtol = 0, atol = 0;
  bool allows(double got, double want) const {
    if (got == want || (std::isnan(got) && std::isnan(want))) return true;
    return std::fabs(got - want) <= atol + rtol * std::fabs(want);  // false for NaN
  }
};

inline constexpr double kF32Unit = 0x1p-24;  // float32's unit roundoff
inline constexpr double kSumSlack = 4;       // see the Note

// Two float32 results that each sum up to `terms` products of magnitude about `scale` (unit
// normal inputs: 1), in different orders: atol from the reduction length (at least `floor`),
// rtol for what scales with the value.
inline Tol f32_sum_tol(int64_t terms, double rtol, double floor = 1e-5, double scale = 1) {
  return {rtol, std::max(floor, kSumSlack * static_cast<double>(terms) * kF32Unit * scale)};
}

// The cuDNN float32 backward (data and filter) against an exact reference. cuDNN's heuristics
// pick FFT and Winograd algorithms for some problems (3x3 stride 1 among them); their
// transforms spread each element's rounding over a whole tile, so the error follows the
// output's largest magnitude, not the element's: the first H200 run (cuDNN 9.19) measured
// 2.1e-5 (conv2d) and 1.7e-5 (conv_transpose2d) of the largest |value|; allowed: 1e-4.
inline constexpr double kCudnnBackwardOfMax = 1e-4;

// How a result compares with its reference under a Tol, accumulated over outputs.
struct Comparison {
  int64_t elements = 0;
  double max_abs = 0, max_rel = 0;  // for the report; the rule is Tol's
  double worst = 0;                 // the largest |got - want| / (atol + rtol |want|): <= 1 passes
  bool ok = true;
  void add(double got, double want, const Tol& tol) {
    ++elements;
    if (got == want || (std::isnan(got) && std::isnan(want))) return;
    const double d = std::fabs(got - want);
    max_abs = std::max(max_abs, std::isnan(d) ? INFINITY : d);
    max_rel = std::max(max_rel, std::isnan(d) ? INFINITY : d / std::max(std::fabs(want), 1e-30));
    const double allowed = tol.atol + tol.rtol * std::fabs(want);
    worst = std::max(worst, std::isnan(d) ? INFINITY : allowed > 0 ? d / allowed : INFINITY);
    if (!tol.allows(got, want)) ok = false;
  }
};

}  // namespace gr::apps
