// Random fills from a Generator: each element's numbers come from the Philox stream at a
// fixed position, so results depend only on (seed, offset), not on threads or device.
#pragma once

#include "core/convert.h"
#include "core/dispatch.h"
#include "core/functors.h"
#include "core/generator.h"
#include "core/philox.h"
#include "core/tensor.h"

namespace gr::native {

// Note [Random streams]
// A fill of n elements reserves ceil(n / per_block) Philox blocks of the generator (4 uint32
// each) and element i reads block offset + i / per_block, on the CPU and CUDA alike (see
// random.cu). per_block is 2 where a value takes 64 random bits (float64 values of the
// continuous distributions, integers) and 4 elsewhere. So a generator's state (seed,
// offset) fixes every later draw: save and restore it to replay them (bit-exact resume).
// Draws built on fills (bernoulli with a tensor p, multinomial) reserve through fills too.
enum class RandomKind { Uniform, Normal, Integer, Exponential, Cauchy, LogNormal, Geometric, Bernoulli };

// What a random fill needs: the Philox position and the distribution's parameters.
struct RandomParams {
  RandomKind kind;
  uint64_t seed;
  uint64_t offset;
  // Uniform: [a, b); Normal and LogNormal: mean a, std b; Exponential: rate a; Cauchy:
  // median a, scale b; Geometric and Bernoulli: probability a.
  double a = 0, b = 1;
  int64_t low = 0;      // Integer: low + (64 random bits) % range
  uint64_t range = 1;
};

// The values of one Philox block's numbers r for a fill of dtype T: per_block of them (4, or
// 2, see Note [Random streams]), the first `count` written to out. Shared by CPU and CUDA; the
// multiply-adds are explicit fma so both round alike (bit-identical uniform, integer and
// Bernoulli fills; the others also depend on each side's log/exp/sin/cos/tan, see random.cu).
template <class T>
GR_HOST_DEVICE GR_INLINE void random_block_values(const RandomParams& p, int64_t per_block, const uint32_t r[4], T* out,
                                                  int64_t count) {
  // All in double (the math:: overloads and ::tan etc. are the C library's on the host and
  // CUDA's on the device).
  constexpr double kPi = 3.141592653589793;
  double v[4];
  // u[k]: uniforms in (0, 1], 24 bits each (4 per block) or 53 bits (2 per block).
  double u[4];
  if (per_block == 4) {
    for (int k = 0; k < 4; ++k) u[k] = uniform_float(r[k]);
  } else {
    u[0] = uniform_double(r[0], r[1]);
    u[1] = uniform_double(r[2], r[3]);
  }
  switch (p.kind) {
    case RandomKind::Uniform:
      for (int k = 0; k < per_block; ++k) v[k] = math::fma(p.b - p.a, 1.0 - u[k], p.a);
      break;
    case RandomKind::Normal:
    case RandomKind::LogNormal:  // Box-Muller; per_block 2 takes its two uniforms from one block
      if (per_block == 4) {
        for (int k = 0; k < 4; k += 2) {
          const double radius = math::sqrt(-2.0 * math::log(u[k]));
          const double angle = 2 * kPi * u[k + 1];
          v[k] = math::fma(p.b * radius, math::cos(angle), p.a);
          v[k + 1] = math::fma(p.b * radius, math::sin(angle), p.a);
        }
      } else {
        const double radius = math::sqrt(-2.0 * math::log(u[0]));
        const double angle = 2 * kPi * u[1];
        v[0] = math::fma(p.b * radius, math::cos(angle), p.a);
        v[1] = math::fma(p.b * radius, math::sin(angle), p.a);
      }
      if (p.kind == RandomKind::LogNormal)
        for (int k = 0; k < per_block; ++k) v[k] = math::exp(v[k]);
      break;
    case RandomKind::Exponential:  // -log(u) / rate, u in (0, 1]: finite
      for (int k = 0; k < per_block; ++k) v[k] = -math::log(u[k]) / p.a;
      break;
    case RandomKind::Cauchy:
      for (int k = 0; k < per_block; ++k) v[k] = math::fma(p.b, ::tan(kPi * (u[k] - 0.5)), p.a);
      break;
    case RandomKind::Geometric: {  // trials until the first success, >= 1
      const double log_q = ::log1p(-p.a);
      for (int k = 0; k < per_block; ++k) v[k] = ::fmax(1.0, ::ceil(math::log(u[k]) / log_q));
      break;
    }
    case RandomKind::Bernoulli:  // 1 - u is uniform in [0, 1): P(1 - u < p) = p
      for (int k = 0; k < per_block; ++k) v[k] = (1.0 - u[k]) < p.a ? 1.0 : 0.0;
      break;
    case RandomKind::Integer: {  // exact in int64, not through double
      const uint64_t x[2] = {(static_cast<uint64_t>(r[0]) << 32) | r[1], (static_cast<uint64_t>(r[2]) << 32) | r[3]};
      for (int64_t k = 0; k < 2 && k < count; ++k)
        out[k] = convert<T>(static_cast<int64_t>(static_cast<uint64_t>(p.low) + x[k] % p.range));
      return;
    }
  }
  for (int64_t k = 0; k < per_block && k < count; ++k) out[k] = convert<T>(v[k]);
}

// Fills a contiguous tensor. Element i draws from Philox block offset + i / per_block.
using RandomFn = void (*)(const Tensor& out, const RandomParams& p);
GR_DECLARE_DISPATCH(RandomFn, random_stub);

// Numbers per Philox block for a dtype and distribution (4 uint32 per block).
int64_t random_values_per_block(RandomKind kind, ScalarType dtype);
// Fills `out` (any layout: a non-contiguous one is filled through a contiguous copy) with
// draws of `kind` from `gen` (null: the default generator). a and b as in RandomParams;
// Integer: integers in [a, b), drawn by random_integers_ (bounds exact integers, |.| <= 2^53).
void random_(const Tensor& out, RandomKind kind, double a, double b, Generator* gen);
// Integers low + (64 random bits) % range.
void random_integers_(const Tensor& out, int64_t low, uint64_t range, Generator* gen);
// out[i] = (u[i] < p[i]) with u uniform in [0, 1) of out's shape, p broadcast (Tensor::bernoulli_).
void bernoulli_tensor_(const Tensor& out, const Tensor& p, Generator* gen);

}  // namespace gr::native
