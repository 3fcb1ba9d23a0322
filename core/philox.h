// Philox4x32-10 counter-based random numbers (Salmon et al., SC'11), shared by CPU and CUDA
// so the same seed and offset give the same numbers on either device.
#pragma once

#include <cstdint>

#include "core/macros.h"

namespace gr {

struct Philox4x32 {
  uint32_t key[2];
  uint32_t counter[4];

  // Stream `subsequence` of generator `seed`, starting `offset` blocks of 4 numbers in.
  GR_HOST_DEVICE Philox4x32(uint64_t seed, uint64_t subsequence, uint64_t offset) {
    key[0] = static_cast<uint32_t>(seed);
    key[1] = static_cast<uint32_t>(seed >> 32);
    counter[0] = static_cast<uint32_t>(offset);
    counter[1] = static_cast<uint32_t>(offset >> 32);
    counter[2] = static_cast<uint32_t>(subsequence);
    counter[3] = static_cast<uint32_t>(subsequence >> 32);
  }

  // Four 32-bit random numbers for the current counter, then advances the counter.
  GR_HOST_DEVICE void next(uint32_t out[4]) {
    uint32_t c[4] = {counter[0], counter[1], counter[2], counter[3]};
    uint32_t k[2] = {key[0], key[1]};
    for (int round = 0; round < 10; ++round) {
      uint64_t p0 = static_cast<uint64_t>(0xD2511F53u) * c[0];
      uint64_t p1 = static_cast<uint64_t>(0xCD9E8D57u) * c[2];
      uint32_t hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
      uint32_t hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
      c[0] = hi1 ^ c[1] ^ k[0];
      c[1] = lo1;
      c[2] = hi0 ^ c[3] ^ k[1];
      c[3] = lo0;
      k[0] += 0x9E3779B9u;
      k[1] += 0xBB67AE85u;
    }
    out[0] = c[0];
    out[1] = c[1];
    out[2] = c[2];
    out[3] = c[3];
    if (++counter[0] == 0 && ++counter[1] == 0 && ++counter[2] == 0) ++counter[3];
  }
};

// Uniform float in (0, 1] from 24 random bits (never 0, so log() is safe).
GR_HOST_DEVICE GR_INLINE float uniform_float(uint32_t x) { return ((x >> 8) + 1) * (1.0f / 16777216.0f); }
// Uniform double in (0, 1] from 53 random bits.
GR_HOST_DEVICE GR_INLINE double uniform_double(uint32_t a, uint32_t b) {
  uint64_t x = (static_cast<uint64_t>(a) << 21) ^ (b >> 11);
  return ((x & ((1ull << 53) - 1)) + 1) * (1.0 / 9007199254740992.0);
}

}  // namespace gr
