// Random fills from a Generator: each element's numbers come from the Philox stream at a
// fixed position, so results depend only on (seed, offset), not on threads or device.
#pragma once

#include "core/dispatch.h"
#include "core/generator.h"
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

// Fills a contiguous tensor. Element i draws from Philox block offset + i / per_block.
using RandomFn = void (*)(const Tensor& out, const RandomParams& p);
GR_DECLARE_DISPATCH(RandomFn, random_stub);

// Numbers per Philox block for a dtype and distribution (4 uint32 per block).
int64_t random_values_per_block(RandomKind kind, ScalarType dtype);
void random_(const Tensor& out, RandomKind kind, double a, double b, Generator* gen);

}  // namespace gr::native
