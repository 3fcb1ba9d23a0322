// Helpers of the CUDA suite: seeded random CPU inputs, and the CPU-vs-CUDA comparison that
// every parity test uses (same shape and dtype, each element within a per-op tolerance,
// the worst element reported on failure).
#pragma once

#include <doctest/doctest.h>
#include <gradring/core/native/copy/copy.h>
#include <gradring/core/native/shape/shape.h>
#include <gradring/gradring.h>

#include <cmath>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "compare.h"

namespace gr::cuda_test {

inline Device cuda0() { return Device(kCUDA, 0); }

// Sets scaled_dot_product_attention's cuDNN switch (gr::cuda::enable_cudnn_sdp) for a scope:
// the parity tests of gradring's own attention kernels run with it off.
class CudnnSdpScope {
 public:
  explicit CudnnSdpScope(bool enabled) : before_(cuda::cudnn_sdp_enabled()) { cuda::enable_cudnn_sdp(enabled); }
  ~CudnnSdpScope() { cuda::enable_cudnn_sdp(before_); }
  CudnnSdpScope(const CudnnSdpScope&) = delete;
  CudnnSdpScope& operator=(const CudnnSdpScope&) = delete;

 private:
  bool before_;
};

// |cuda - cpu| <= atol + rtol * |cpu| for every element.
struct Tol {
  double rtol = 0;
  double atol = 0;
};
constexpr Tol kExact{0, 0};

// Uniform values in [lo, hi) (integer dtypes: floored), from a fixed seed.
inline Tensor random_tensor(IntArrayRef shape, ScalarType dtype, uint64_t seed, double lo = -2, double hi = 2) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<double> v(static_cast<size_t>(n));
  const bool integral = !is_floating_point(dtype);
  for (double& x : v) x = integral ? std::floor(dist(rng)) : dist(rng);
  Tensor t = native::reshape(tensor(v, TensorOptions(kFloat64)), shape);
  return native::to_dtype(t, dtype);
}

// Every value of t (any device and dtype) as a double, in row-major order.
inline std::vector<double> as_doubles(const Tensor& t) {
  Tensor c = native::contiguous(native::to_dtype(native::to_device(t, Device(kCPU)), kFloat64));
  const double* p = c.data_ptr<double>();
  return std::vector<double>(p, p + c.numel());
}

inline void check_match(const Tensor& cuda_result, const Tensor& cpu_result, Tol tol, const std::string& what) {
  INFO(what);
  REQUIRE(cuda_result.defined());
  CHECK(cuda_result.is_cuda());
  REQUIRE(cuda_result.sizes() == cpu_result.sizes());
  CHECK(cuda_result.scalar_type() == cpu_result.scalar_type());
  const std::vector<double> got = as_doubles(cuda_result), want = as_doubles(cpu_result);
  size_t nbad = 0, first = 0;
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(got[i]) && std::isnan(want[i])) continue;  // both NaN: the CPU's answer too
    if (!test::is_close(got[i], want[i], tol.rtol, tol.atol) && nbad++ == 0) first = i;  // see compare.h
    worst = test::max_nan(worst, test::abs_diff(got[i], want[i]));
  }
  if (nbad > 0) {
    std::ostringstream msg;
    msg << what << ": " << nbad << " of " << got.size() << " elements differ (rtol " << tol.rtol << ", atol "
        << tol.atol << "); first at flat index " << first << ": cuda " << got[first] << " vs cpu " << want[first]
        << "; max |diff| " << worst;
    FAIL_CHECK(msg.str());
  }
}

// Runs f on the CPU inputs and on copies of them on cuda:0, and compares the results.
inline void check_parity(const std::string& what, const TensorList& cpu_inputs,
                         const std::function<Tensor(const TensorList&)>& f, Tol tol) {
  TensorList cuda_inputs;
  for (const Tensor& t : cpu_inputs) cuda_inputs.push_back(native::to_device(t, cuda0()));
  Tensor want = f(cpu_inputs);
  Tensor got = f(cuda_inputs);
  check_match(got, want, tol, what);
}

}  // namespace gr::cuda_test
