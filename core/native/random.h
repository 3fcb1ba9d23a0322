// Random fills from a Generator: each element's numbers come from the Philox stream at a
// fixed position, so results depend only on (seed, offset), not on threads or device.
#pragma once

#include "core/dispatch.h"
#include "core/functors.h"
#include "core/generator.h"
#include "core/philox.h"
#include "core/tensor.h"

namespace gr::native {

enum class RandomKind { Uniform, Normal, Integer };

// What a random fill needs: the Philox position and the distribution's parameters.
struct RandomParams {
  RandomKind kind;
  uint64_t seed;
  uint64_t offset;
  double a = 0, b = 1;  // Uniform: [a, b); Normal: mean a, std b; Integer: [a, b)
};

// The values of one Philox block's numbers r for a fill of dtype T: per_block of them (4, or
// 2 for float64 and integers), the first `count` written to out. Shared by CPU and CUDA; the
// multiply-adds are explicit fma so both round alike (bit-identical uniform and integer
// fills; normal ones also depend on each side's log/sin/cos, see random.cu).
template <class T>
GR_HOST_DEVICE GR_INLINE void random_block_values(const RandomParams& p, int64_t per_block, const uint32_t r[4], T* out,
                                                  int64_t count) {
  constexpr double kTwoPi = 6.283185307179586;
  double v[4];
  if (p.kind == RandomKind::Uniform) {
    if (per_block == 4) {
      for (int k = 0; k < 4; ++k) v[k] = math::fma(p.b - p.a, 1.0 - uniform_float(r[k]), p.a);
    } else {
      v[0] = math::fma(p.b - p.a, 1.0 - uniform_double(r[0], r[1]), p.a);
      v[1] = math::fma(p.b - p.a, 1.0 - uniform_double(r[2], r[3]), p.a);
    }
  } else if (p.kind == RandomKind::Normal) {  // Box-Muller
    if (per_block == 4) {
      for (int k = 0; k < 4; k += 2) {
        const double radius = math::sqrt(-2.0 * math::log(static_cast<double>(uniform_float(r[k]))));
        const double angle = kTwoPi * uniform_float(r[k + 1]);
        v[k] = math::fma(p.b * radius, math::cos(angle), p.a);
        v[k + 1] = math::fma(p.b * radius, math::sin(angle), p.a);
      }
    } else {
      const double radius = math::sqrt(-2.0 * math::log(uniform_double(r[0], r[1])));
      const double angle = kTwoPi * uniform_double(r[2], r[3]);
      v[0] = math::fma(p.b * radius, math::cos(angle), p.a);
      v[1] = math::fma(p.b * radius, math::sin(angle), p.a);
    }
  } else {  // integers: exact in int64, not through double
    const auto low = static_cast<int64_t>(p.a);
    const auto range = static_cast<uint64_t>(static_cast<int64_t>(p.b) - low);
    const uint64_t x[2] = {(static_cast<uint64_t>(r[0]) << 32) | r[1], (static_cast<uint64_t>(r[2]) << 32) | r[3]};
    for (int64_t k = 0; k < 2 && k < count; ++k) out[k] = static_cast<T>(low + static_cast<int64_t>(x[k] % range));
    return;
  }
  for (int64_t k = 0; k < per_block && k < count; ++k) out[k] = static_cast<T>(v[k]);
}

// Fills a contiguous tensor. Element i draws from Philox block offset + i / per_block.
using RandomFn = void (*)(const Tensor& out, const RandomParams& p);
GR_DECLARE_DISPATCH(RandomFn, random_stub);

// Numbers per Philox block for a dtype and distribution (4 uint32 per block).
int64_t random_values_per_block(RandomKind kind, ScalarType dtype);
void random_(const Tensor& out, RandomKind kind, double a, double b, Generator* gen);

}  // namespace gr::native
