// fast_exp and fast_erf (Note [Vectorisable exp and erf]) against the C library in double.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>

#include "compare.h"
#include "core/functors_fast_math.h"

namespace {

// Distance from a float result to the exact value, in units of the float's last place.
double ulps(float got, double exact) {
  const float rounded = static_cast<float>(exact);
  const double ulp = std::nextafter(std::fabs(rounded), std::numeric_limits<float>::infinity()) - std::fabs(rounded);
  return gr::test::abs_diff(static_cast<double>(got), exact) / ulp;  // NaN stays NaN
}

}  // namespace

TEST_CASE("fast_exp is within 2 ulp of exp from -87 to 88, 0 below, and keeps NaN") {
  double worst = 0;
  for (int i = 0; i <= 400000; ++i) {
    const float x = -87.0f + 175.0f * static_cast<float>(i) / 400000.0f;
    worst = gr::test::max_nan(worst, ulps(gr::math::fast_exp(x), std::exp(static_cast<double>(x))));
  }
  CHECK(worst <= 2.0);
  CHECK(gr::math::fast_exp(0.0f) == 1.0f);
  CHECK(gr::math::fast_exp(-100.0f) == 0.0f);
  CHECK(gr::math::fast_exp(-std::numeric_limits<float>::infinity()) == 0.0f);
  CHECK(std::isnan(gr::math::fast_exp(std::numeric_limits<float>::quiet_NaN())));
  CHECK(gr::math::fast_exp(1.5) == std::exp(1.5));  // double is the C library's
}

TEST_CASE("fast_erf is within 8 ulp of erf, odd, saturates at +-1 and keeps NaN") {
  double worst = 0;
  int not_odd = 0;
  for (int i = 0; i <= 400000; ++i) {
    const float x = 1e-6f + 3.92f * static_cast<float>(i) / 400000.0f;
    worst = gr::test::max_nan(worst, ulps(gr::math::fast_erf(x), std::erf(static_cast<double>(x))));
    not_odd += gr::math::fast_erf(-x) != -gr::math::fast_erf(x);
  }
  CHECK(worst <= 8.0);
  CHECK(not_odd == 0);
  for (float tiny : {1e-30f, 1e-12f, 3e-8f}) CHECK(ulps(gr::math::fast_erf(tiny), std::erf(double(tiny))) <= 1.0);
  CHECK(gr::math::fast_erf(0.0f) == 0.0f);
  CHECK(gr::math::fast_erf(4.5f) == 1.0f);
  CHECK(gr::math::fast_erf(-1e30f) == -1.0f);
  CHECK(std::isnan(gr::math::fast_erf(std::numeric_limits<float>::quiet_NaN())));
  CHECK(gr::math::fast_erf(0.3) == std::erf(0.3));
}
