// Numeric comparisons for the tests that no wrong result can pass (Note [Comparisons that see
// NaN]). Free of doctest, so spawned ranks use them too; test_util.h adds the CHECK forms and
// tests/compare.py is the Python twin.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <gradring/gradring.h>

namespace gr::test {

// Note [Comparisons that see NaN]
// `if (abs(got - ref) > tol) fail` is false for NaN, and `std::max(worst, NaN)` returns
// worst: checks written that way pass on a NaN result. Every comparison here is written so
// that NaN fails it:
//   - the difference of two values is 0 when they are equal (equal infinities included),
//     otherwise |got - ref|: NaN when either is NaN, +inf when one is infinite or they are
//     infinities of opposite signs (abs_diff);
//   - a running maximum keeps a NaN once seen (max_nan);
//   - a tolerance is checked as `d <= tol`, which is false for NaN; relative tolerances
//     never scale by an infinite reference (is_close);
//   - sizes, shapes and the sets of names are compared before any value, and a mismatch
//     fails instead of truncating or broadcasting.
// tests/core/test_compare.cpp feeds each helper NaN and infinities in either argument.

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// |got - ref|, 0 for equal values, NaN if either is NaN, +inf for an infinity against
// anything but itself.
inline double abs_diff(double got, double ref) { return got == ref ? 0.0 : std::fabs(got - ref); }

// The larger of a and b, NaN if either is (std::max drops a NaN in its second argument).
inline double max_nan(double a, double b) { return std::isnan(a) || std::isnan(b) ? kNaN : std::max(a, b); }

// Whether got is within atol + rtol * |ref| of ref: equal values always; non-finite values
// only when equal (so never NaN).
inline bool is_close(double got, double ref, double rtol, double atol) {
  if (got == ref) return true;
  if (!std::isfinite(got) || !std::isfinite(ref)) return false;
  return std::fabs(got - ref) <= atol + rtol * std::fabs(ref);
}

// Flat float64 copy of any tensor's values (any device), in logical order.
inline std::vector<double> values(const Tensor& t) {
  Tensor c = t.detach().to(kFloat64).cpu().contiguous();
  const double* p = c.data_ptr<double>();
  return {p, p + c.numel()};
}

// The largest abs_diff over two equally long sequences (NaN if any is NaN); throws on
// different lengths.
inline double max_abs_diff(const std::vector<double>& got, const std::vector<double>& ref) {
  GR_CHECK(got.size() == ref.size(), "max_abs_diff: ", got.size(), " values against ", ref.size());
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) worst = max_nan(worst, abs_diff(got[i], ref[i]));
  return worst;
}

// The largest abs_diff between two tensors of the same shape; throws naming both shapes
// otherwise (no broadcasting).
inline double max_abs_diff(const Tensor& got, const Tensor& ref) {
  GR_CHECK(got.sizes() == ref.sizes(), "max_abs_diff: shapes ", got.sizes(), " and ", ref.sizes(), " differ");
  return max_abs_diff(values(got), values(ref));
}

// The largest max_abs_diff over two dictionaries of tensors (state_dicts): the same names
// (in any order) and shapes, or it throws naming the first name one of them lacks.
inline double max_abs_diff(const OrderedDict<Tensor>& got, const OrderedDict<Tensor>& ref) {
  for (const auto& [name, t] : got) GR_CHECK(ref.find(name) != nullptr, "max_abs_diff: unexpected entry '", name, "'");
  double worst = 0;
  for (const auto& [name, t] : ref) {
    const Tensor* g = got.find(name);
    GR_CHECK(g != nullptr, "max_abs_diff: no entry '", name, "'");
    GR_CHECK(g->sizes() == t.sizes(), "max_abs_diff: '", name, "' has shape ", g->sizes(), ", expected ", t.sizes());
    worst = max_nan(worst, max_abs_diff(*g, t));
  }
  return worst;
}

// max_abs_diff relative to the largest magnitude in `ref` (NaN and infinities as above).
inline double max_rel_diff(const Tensor& got, const Tensor& ref) {
  double scale = 0;
  for (double v : values(ref)) scale = max_nan(scale, std::fabs(v));
  return max_abs_diff(got, ref) / (1e-30 + scale);
}

// Whether |got - ref| < tol * (1 + max(|got|, |ref|)): doctest's
// `got == Approx(ref).epsilon(tol).scale(1)`, check_close's tolerance since it was written
// with it, here with equal infinities matching and nothing else non-finite.
inline bool near(double got, double ref, double tol) {
  if (got == ref) return true;
  if (!std::isfinite(got) || !std::isfinite(ref)) return false;
  return std::fabs(got - ref) < tol * (1 + std::max(std::fabs(got), std::fabs(ref)));
}

// "" when `ok(got[i], ref[i])` holds at every index; otherwise how many indices fail, with
// the first one's values. Different lengths are a mismatch too.
template <class Ok>
std::string first_mismatch(const std::vector<double>& got, const std::vector<double>& ref, Ok ok) {
  if (got.size() != ref.size())
    return std::to_string(got.size()) + " values against " + std::to_string(ref.size()) + " expected";
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (!ok(got[i], ref[i]) && bad++ == 0) first = i;
  if (bad == 0) return "";
  std::ostringstream s;
  s.precision(17);
  s << bad << " of " << got.size() << " values differ; the first at flat index " << first << ": " << got[first]
    << " vs " << ref[first];
  return s.str();
}

// "" when got and ref have the same shape and every pair of values is near() at `tol`;
// otherwise what differs (check_close's test).
inline std::string close_mismatch(const Tensor& got, const Tensor& ref, double tol) {
  if (got.sizes() != ref.sizes()) {
    std::ostringstream s;
    s << "shapes " << got.sizes() << " and " << ref.sizes() << " differ";
    return s.str();
  }
  return first_mismatch(values(got), values(ref), [tol](double x, double y) { return near(x, y, tol); });
}

// As close_mismatch, with is_close(rtol, atol) for each pair (check_allclose's test).
inline std::string allclose_mismatch(const Tensor& got, const Tensor& ref, double rtol, double atol) {
  if (got.sizes() != ref.sizes()) return close_mismatch(got, ref, 0);
  return first_mismatch(values(got), values(ref), [=](double x, double y) { return is_close(x, y, rtol, atol); });
}

// Whether a and b hold the same dtype, shape and values (NaN equal to NaN, -0 to 0).
inline bool same_values(const Tensor& a, const Tensor& b) {
  if (a.scalar_type() != b.scalar_type() || a.sizes() != b.sizes()) return false;
  if (a.is_floating_point()) {
    const std::vector<double> x = values(a), y = values(b);
    for (size_t i = 0; i < x.size(); ++i)
      if (!(x[i] == y[i] || (std::isnan(x[i]) && std::isnan(y[i])))) return false;
    return true;
  }
  return a.to(kInt64).equal(b.to(kInt64));
}

// The largest distance between a and b in units in the last place of their (reduced float)
// dtype: how many representable values lie between them. Shapes must match; NaN against
// NaN and an infinity against itself are 0 apart, any other pair with a non-finite value is
// infinitely far (INT64_MAX): 1 ulp from bfloat16's largest finite value is infinity.
inline int64_t max_ulp_distance(const Tensor& a, const Tensor& b) {
  GR_CHECK(a.sizes() == b.sizes(), "max_ulp_distance: shapes ", a.sizes(), " and ", b.sizes(), " differ");
  Tensor x = a.to(kFloat32).cpu().contiguous(), y = b.to(kFloat32).cpu().contiguous();
  const int shift = a.scalar_type() == kBFloat16 ? 16 : 13;  // float32 bits below the reduced mantissa
  auto key = [shift](float f) {  // ordered integers across zero
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    const int64_t magnitude = (bits & 0x7fffffffu) >> shift;
    return (bits >> 31) ? -magnitude : magnitude;
  };
  int64_t worst = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    const float u = x.data_ptr<float>()[i], v = y.data_ptr<float>()[i];
    if (!std::isfinite(u) || !std::isfinite(v)) {
      if (!(u == v || (std::isnan(u) && std::isnan(v)))) return std::numeric_limits<int64_t>::max();
      continue;
    }
    worst = std::max<int64_t>(worst, std::abs(key(u) - key(v)));
  }
  return worst;
}

}  // namespace gr::test
