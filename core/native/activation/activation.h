// The activations of the nn breadth work without autograd (gelu with its backward, silu,
// mish, leaky_relu, elu), written once as GR_HOST_DEVICE functors that the CPU loops
// (activation.cpp) and the CUDA kernels (cuda_kernels/activation_ops.cu) both run through
// ActivationKernels. Formulas follow ATen's CPU kernels.
#pragma once

#include "core/functors_fast_math.h"
#include "core/native/elementwise/elementwise.h"

namespace gr::functors {

inline constexpr double kSqrt1_2 = 0.70710678118654752440;      // 1 / sqrt(2)
inline constexpr double kInvSqrt2Pi = 0.39894228040143267794;   // 1 / sqrt(2 pi)
inline constexpr double kSqrt2OverPi = 0.79788456080286535588;  // sqrt(2 / pi)
inline constexpr double kGeluKappa = 0.044715;

// x Phi(x), Phi the normal CDF. float's erf and exp vectorise: See Note [Vectorisable exp and erf].
template <class T> struct Gelu {
  GR_HOST_DEVICE T operator()(T x) const { return x * T(0.5) * (T(1) + math::fast_erf(x * T(kSqrt1_2))); }
};
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
template <class T> struct GeluTanh {
  GR_HOST_DEVICE T operator()(T x) const {
    const T inner = T(kSqrt2OverPi) * (x + T(kGeluKappa) * x * x * x);
    return T(0.5) * x * (T(1) + math::tanh(inner));
  }
};
// g (Phi(x) + x phi(x))
template <class T> struct GeluBackward {
  GR_HOST_DEVICE T operator()(T g, T x) const {
    const T cdf = T(0.5) * (T(1) + math::fast_erf(x * T(kSqrt1_2)));
    const T pdf = math::fast_exp(T(-0.5) * x * x) * T(kInvSqrt2Pi);
    return g * (cdf + x * pdf);
  }
};
template <class T> struct GeluTanhBackward {
  GR_HOST_DEVICE T operator()(T g, T x) const {
    const T x_sq = x * x;
    const T t = math::tanh(T(kSqrt2OverPi) * (x + T(kGeluKappa) * x_sq * x));
    const T left = T(0.5) * x, right = T(1) + t;
    const T dinner = T(kSqrt2OverPi) * (T(1) + T(3 * kGeluKappa) * x_sq);
    return g * (T(0.5) * right + left * (T(1) - t * t) * dinner);
  }
};
// x sigmoid(x)
template <class T> struct Silu {
  GR_HOST_DEVICE T operator()(T x) const { return x / (T(1) + math::exp(-x)); }
};
// x tanh(softplus(x))
template <class T> struct Mish {
  GR_HOST_DEVICE T operator()(T x) const { return x * math::tanh(math::log1p(math::exp(x))); }
};
template <class T> struct LeakyRelu {
  T slope;
  GR_HOST_DEVICE T operator()(T x) const { return x > T(0) ? x : x * slope; }
};
// scale * (x > 0 ? x : alpha * (exp(input_scale * x) - 1))
template <class T> struct Elu {
  T alpha, scale, input_scale;
  GR_HOST_DEVICE T operator()(T x) const {
    return x > T(0) ? x * scale : alpha * scale * math::expm1(x * input_scale);
  }
};

}  // namespace gr::functors

namespace gr::native {

// Every activation kernel takes up to three scalar parameters (unused ones are 0).
using ActivationFn = void (*)(const StridedLoop&, ScalarType t, const Scalar& p0, const Scalar& p1, const Scalar& p2);
#define GR_ACTIVATION_STUBS(X) X(gelu) X(gelu_backward) X(silu) X(mish) X(leaky_relu) X(elu)
#define GR_DECLARE_ACTIVATION_STUB(name) GR_DECLARE_DISPATCH(ActivationFn, name##_stub);
GR_ACTIVATION_STUBS(GR_DECLARE_ACTIVATION_STUB)
#undef GR_DECLARE_ACTIVATION_STUB

// The kernels over a device's element-wise map (cpu_map or gpu_map): Map::template
// run<Out, In...>(loop, f) writes out = f(in...). gelu's p0: 0 = "none", 1 = "tanh".
template <class Map>
struct ActivationKernels {
  static void gelu(const StridedLoop& L, ScalarType t, const Scalar& tanh_approx, const Scalar&, const Scalar&) {
    dispatch_floating(t, "gelu", [&]<class T>() {
      if (tanh_approx.to_int64() != 0) Map::template run<T, T>(L, functors::GeluTanh<T>{});
      else Map::template run<T, T>(L, functors::Gelu<T>{});
    });
  }
  static void gelu_backward(const StridedLoop& L, ScalarType t, const Scalar& tanh_approx, const Scalar&,
                            const Scalar&) {
    dispatch_floating(t, "gelu_backward", [&]<class T>() {
      if (tanh_approx.to_int64() != 0) Map::template run<T, T, T>(L, functors::GeluTanhBackward<T>{});
      else Map::template run<T, T, T>(L, functors::GeluBackward<T>{});
    });
  }
  static void silu(const StridedLoop& L, ScalarType t, const Scalar&, const Scalar&, const Scalar&) {
    dispatch_floating(t, "silu", [&]<class T>() { Map::template run<T, T>(L, functors::Silu<T>{}); });
  }
  static void mish(const StridedLoop& L, ScalarType t, const Scalar&, const Scalar&, const Scalar&) {
    dispatch_floating(t, "mish", [&]<class T>() { Map::template run<T, T>(L, functors::Mish<T>{}); });
  }
  static void leaky_relu(const StridedLoop& L, ScalarType t, const Scalar& slope, const Scalar&, const Scalar&) {
    dispatch_floating(t, "leaky_relu",
                      [&]<class T>() { Map::template run<T, T>(L, functors::LeakyRelu<T>{slope.to<T>()}); });
  }
  static void elu(const StridedLoop& L, ScalarType t, const Scalar& alpha, const Scalar& scale,
                  const Scalar& input_scale) {
    dispatch_floating(t, "elu", [&]<class T>() {
      Map::template run<T, T>(L, functors::Elu<T>{alpha.to<T>(), scale.to<T>(), input_scale.to<T>()});
    });
  }
};

// gelu: approximate "none" or "tanh" (refused otherwise). Floating inputs only.
Tensor gelu(const Tensor& x, std::string_view approximate);
Tensor gelu_backward(const Tensor& grad, const Tensor& x, std::string_view approximate);
Tensor silu(const Tensor& x);
Tensor mish(const Tensor& x);
Tensor leaky_relu(const Tensor& x, const Scalar& negative_slope);
Tensor elu(const Tensor& x, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale);

}  // namespace gr::native
